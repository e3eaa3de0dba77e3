"""`run --lanes N`: the manager's plan as a graph, up to N lanes at once, one merge queue.

The loop: plan (one manager call; a plan that is no graph gets corrective retries) → start up to
N ready tasks, each a lane (`lane.start`: the rounds driver in a worktree of its own, on its own
branch, held to a reservation of the one budget) → as each lane ends, land it (`queue.land`,
one at a time: merge-tree, the user's checks on the merged tree, the manager's review) →
merged: its worktree goes; refused: the manager writes one follow-up task on the work merged so
far → until every task merged or nothing more can start → the user's branch fast-forwards
(`worktrees.finish`). The record (`record.save`) is rewritten after every change, so
`run --resume` after the driver's death continues: a merged task never runs again.

Nothing holding unmerged commits is removed: a lane that ends without finishing, or is stopped
for its silence, keeps its branch and worktree, and the run says where.

Run by `lanes.flow`, the loop is a DBOS workflow: whatever it learns from the world (a lane's
start, which lanes ended, a landing, a manager's answer, the user's branch) comes from a step
(`durable.steps.step`), so a driver killed and recovered replays the same decisions from the
record and redoes none. Outside a workflow the steps are plain calls.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..checks.evidence import user_checks
from ..durable.steps import step
from ..gitrepo import git_path, run_git, toplevel
from ..rounds.driver import custody_for
from . import graph, queue, worktrees
from .ask import Asker, metered
from .begin import LanesOptions as LanesOptions
from .begin import Note, fresh_id, planned, planned_graph, resumed, task_state, usd, worst_usd
from .begin import home_of as home_of
from .budget import Amount
from .lane import (
    Lane,
    LaneSpec,
    Orphan,
    attach,
    final,
    interrupted,
    recorded_pid,
    running,
    start,
    used,
    wait_any,
)
from .outcome import end, result
from .record import FINAL, NAME, LanesRun, TaskState, lane_folder, save

# Follow-ups written for one planned task at most (a repair of a repair counts too).
FOLLOW_UPS = 2
# A silent lane is started again this many times (resumed in its worktree), then dropped.
RETRIES = 1
# What the budget says when the manager's next call does not fit it.
NO_CALL = "the budget left fits not the manager's next call"
EMPTY = "the lane committed nothing, so there is nothing to land"
# A follow-up's id (`begin.fresh_id`), by its older name.
_fresh = fresh_id


def drive(
    opts: LanesOptions,
    asker: Asker,
    note: Note,
    env: Mapping[str, str] | None = None,
    *,
    run_id: str = "",
    last: LanesRun | None = None,
) -> dict[str, Any]:
    """Run (or resume) a lanes run to its end; the final record, `exit_code` included.

    A durable run names its `run_id` (a new run: the caller refused an unfinished one) or
    gives the `last` record to resume (never read from the file, which changes as it runs)."""
    root = toplevel(opts.worktree)
    home = home_of(root)
    if opts.resume:
        run = resumed(home, opts, last)
    else:
        run = planned(root, opts, asker, note, run_id=run_id, checked=bool(run_id))
    run.call_usd = worst_usd(asker.config, asker.config.max_output_tokens)
    run.integration = run.integration or step("lanes.integration", worktrees.begin, root, run.run)
    save(home, run)
    loop = _Loop(root, home, run, asker, note, env)
    try:
        loop.reattach()
        loop.go()
    except KeyboardInterrupt:
        # Ctrl-C stops the lanes too (each ends its round as interrupted); resume continues them.
        for lane in loop.lanes.values():
            lane.stop()
        run.status, run.why = "interrupted", "interrupted; `run --resume` continues"
    end(root, run)
    save(home, run)
    return result(run, home / NAME)


class _Loop:
    def __init__(
        self,
        root: Path,
        home: Path,
        run: LanesRun,
        asker: Asker,
        note: Note,
        env: Mapping[str, str] | None,
    ) -> None:
        self.root, self.home, self.run, self.asker, self.note = root, home, run, asker, note
        self.env = env
        self.lanes: dict[str, Lane] = {}
        # Lanes this process started, by task: a start replayed from the record has none.
        self._live: dict[str, Lane] = {}
        self.charged = asker.cost_usd

    def save(self) -> None:
        # The manager's spend since the last save comes out of the one budget.
        self.run.budget.charge(usd(self.asker.cost_usd - self.charged))
        self.charged = self.asker.cost_usd
        self.run.manager_calls = self.asker.calls
        save(self.home, self.run)

    def reattach(self) -> None:
        """After the driver's death: a lane still running is watched again; one that left its
        final record is taken as ended; one gone without a record resumes in its worktree; a
        landing cut short lands again (the queue's compare-and-swap makes that safe)."""
        for task in self.run.tasks:
            if task.state == "merged":
                self._remove(task)
            elif task.state == "landing":
                self._land(task)
            elif task.state == "running":
                self._rejoin(task)

    def _remove(self, task: TaskState) -> None:
        step(f"lanes.remove.{task.id}", worktrees.remove, self.root, self.run.run, task.id)

    def _observe(self, task: TaskState) -> tuple[int, int, dict[str, Any] | None, bool]:
        """A running task's lane as the world has it: its pid and start (the lane wrote them
        where the record has none), its final record, whether that process still runs."""
        pid, pid_start = task.pid, task.pid_start
        if not pid:
            pid, pid_start = recorded_pid(self._folder(task))
        record = final(self._folder(task) / FINAL)
        return pid, pid_start, record, bool(pid) and running(pid, pid_start)

    def _rejoin(self, task: TaskState) -> None:
        """A running task's lane: its final record first (a lane that left one has ended, and
        its pid may be a stranger's by now), then its process, known by its pid and its start
        time, else it resumes in its worktree."""
        pid, pid_start, record, lives = step(f"lanes.rejoin.{task.id}", self._observe, task)
        unlock = not pid
        task.pid, task.pid_start = pid, pid_start
        if record is not None and record.get("status") != "interrupted":
            self._ended(task, record)
        elif lives:
            held = self.run.budget.reserved[task.id]
            spec = self._spec(task, Path(task.worktree), held, resume=False)
            self.lanes[task.id] = attach(spec, task.pid, task.pid_start, self._folder(task))
            self.note(f"Lane {task.id} re-attached (pid {task.pid}).")
        else:
            # Its worktree is used as it is: `worktrees.add` never leaves one half made, and
            # an earlier attempt's uncommitted work in it is the lane's to go on with.
            self.run.budget.reserved.pop(task.id, None)
            # No pid: a lock its branch's creation left behind (the driver died in it) is
            # removed, as no lane process ran to hold it.
            self._start(task, unlock=unlock)

    def go(self) -> None:
        block = False
        while True:
            for tid, kind, record in step("lanes.watch", self._watch, block):
                del self.lanes[tid]
                task = self.run.task(tid)
                if kind == "ended":
                    self._ended(task, record)
                elif kind == "silent":
                    self._silent(task)
                else:  # "lost": as `_rejoin` finds a lane gone without its record
                    self.run.budget.reserved.pop(tid, None)
                    self._start(task)
            block = True
            if not self.run.starved:
                self._start_ready()
            if not self.lanes:
                return

    def _watch(self, block: bool) -> list[tuple[str, str, dict[str, Any] | None]]:
        """The lanes that ended (with their final record), fell silent (stopped here) or, being
        a killed driver's, are gone without a final record (lost: resumed in their worktree,
        as `_rejoin` does); with `block`, waits until there is one. Interrupted
        (`lane.interrupted`), the wait ends as a Ctrl-C on this thread would."""
        while True:
            now = time.time()
            events: list[tuple[str, str, dict[str, Any] | None]] = []
            for tid, lane in list(self.lanes.items()):
                if lane.poll() is not None:
                    record = final(lane.out)
                    cut = record is None or record.get("status") == "interrupted"
                    lost = cut and isinstance(lane.proc, Orphan)
                    events.append((tid, "lost" if lost else "ended", record))
                elif lane.silent_for(now) > self.run.silent_s:
                    lane.stop()
                    events.append((tid, "silent", None))
            if events or not block or not self.lanes:
                return events
            if interrupted.is_set():
                raise KeyboardInterrupt
            wait_any(list(self.lanes.values()))

    def _start_ready(self) -> None:
        for task in graph.ready(planned_graph(self.run), self.run.merged(), self._started()):
            if len(self.lanes) >= self.run.lanes or not self._start(self.run.task(task.id.strip())):
                return

    def _started(self) -> set[str]:
        return {t.id for t in self.run.tasks if t.state != "pending"}

    def _start(self, task: TaskState, *, unlock: bool = False) -> bool:
        b = self.run.budget
        share = b.default_share(self.run.lanes, self.run.lane_usd)
        if not b.reserve(task.id, share):
            self.note(f"Task {task.id} waits: its reservation does not fit the budget left.")
            # With no lane running, nothing will give budget back: the run ends on it.
            if not self.lanes:
                self.run.starved = "the budget left fits no lane"
            return False
        # Recorded as running before its branch or process exists: a driver killed in between
        # leaves a task `reattach` continues (its branch reused, its lane found by the pid the
        # lane writes), never a second lane; a branch for a task never started is refused.
        new = task.attempts == 0
        task.state, task.pid, task.pid_start = "running", 0, 0
        task.attempts += 1
        task.branch = worktrees.lane_branch(self.run.run, task.id)
        self.save()
        name = f"lanes.start.{task.id}.{task.attempts}"
        where, pid, born_at, started = step(name, self._launch, task, share, new, unlock)
        task.worktree = where
        lane = self._live.pop(task.id, None)
        if lane is None:  # started before the driver was killed: watched by its pid
            spec = self._spec(task, Path(where), share, resume=False)
            lane = attach(spec, pid, born_at, self._folder(task))
        self.lanes[task.id] = lane
        task.pid, task.pid_start, task.started = pid, born_at, started
        self.note(f"Lane {task.id} started (pid {pid}): {task.title}")
        self.save()
        return True

    def _launch(
        self, task: TaskState, share: Amount, new: bool, unlock: bool
    ) -> tuple[str, int, int, float]:
        """The lane's worktree and process (one step): where, its pid, its start time."""
        if unlock:
            git_path(self.root, f"refs/heads/{task.branch}.lock").unlink(missing_ok=True)
        path = worktrees.add(self.root, self.run.run, task.id, new=new)
        task.worktree = str(path)
        # A lane whose rounds run began (a killed or stopped lane) continues it.
        resume = custody_for(path).path.exists()
        lane = start(self._spec(task, path, share, resume=resume), self._folder(task), self.env)
        self._live[task.id] = lane
        return str(path), lane.pid, lane.start, lane.started

    def _spec(self, task: TaskState, path: Path, share: Amount, *, resume: bool) -> LaneSpec:
        return LaneSpec(
            task_id=task.id,
            worktree=path,
            implementer=self.run.implementer,
            contract=task.contract,
            reservation=share,
            round_timeout_s=self.run.round_timeout_s,
            checks=tuple(self.run.checks),
            resume=resume,
            rounds=self.run.rounds,
            host_args=tuple(self.run.host_args),
            require_wall=self.run.require_wall,
        )

    def _folder(self, task: TaskState) -> Path:
        return lane_folder(self.home, self.run.run, task.id)

    def _ended(self, task: TaskState, record: dict[str, Any] | None) -> None:
        held = self.run.budget.reserved.get(task.id, self.run.budget.free())
        spent = used(record, held)
        self.run.budget.settle(task.id, spent)
        task.ended = time.time()
        task.usd += spent.usd
        task.tokens += int(spent.tokens)
        task.rounds += int((record or {}).get("rounds_used") or 0)
        status = str((record or {}).get("status") or "error")
        if status != "complete":
            task.state = "dropped"
            task.why = f"the lane ended {status}: {(record or {}).get('why', 'no record')}"
            self.note(f"Lane {task.id} {task.why}; its branch {task.branch} is kept.")
            self.save()
            return
        task.state = "landing"
        self.run.queue.append(task.id)
        self.save()
        # In the queue's order: a landing that waited on the budget may fit what this lane
        # gave back.
        for tid in list(self.run.queue):
            self._land(self.run.task(tid))

    def _landed_before(self, task: TaskState) -> queue.Merged | None:
        """A landing the driver's death cut short after the queue merged it: the integration
        head is the queue's merge of the recorded head and this lane, so it is taken as ours."""
        if not worktrees.merged(self.root, self.run.run, task.id):
            return None
        head = worktrees.begin(self.root, self.run.run)
        first = run_git(self.root, "rev-parse", "--verify", "--quiet", f"{head}^1", ok_codes=(0, 1))
        return queue.Merged(head) if first.strip() == self.run.integration else None

    def _silent(self, task: TaskState) -> None:
        self.run.budget.settle(task.id, self.run.budget.reserved.get(task.id, usd(0.0)))
        if task.attempts <= RETRIES:
            self.note(f"Lane {task.id} was silent too long: stopped, resumed in its worktree.")
            self._start(task)
            return
        task.state, task.why = "dropped", "silent past its timeout; its branch is kept"
        task.ended = time.time()
        self.note(f"Lane {task.id} {task.why} ({task.branch}).")
        self.save()

    def _land(self, task: TaskState) -> None:
        """Land a finished lane (or find it landed by a driver killed since)."""
        root = task.follows or task.id
        follow = sum(1 for t in self.run.tasks if t.follows == root) < FOLLOW_UPS
        before = step(f"lanes.landed.{task.id}", self._landed_before, task)
        outcome = before or self._landing(task, follow)
        if outcome is None:
            return
        if task.id in self.run.queue:
            self.run.queue.remove(task.id)
        if isinstance(outcome, queue.Refused):
            self._refused(task, outcome, root if follow else "")
            self.run.budget.answered()
            self.save()
            return
        self.run.budget.answered()
        task.state, task.why = "merged", f"merged as {outcome.sha[:12]}"
        self.run.integration = outcome.sha
        # Saved before its branch goes: a driver killed in between finds it merged, and
        # `reattach` removes what is left of it.
        self.save()
        self._remove(task)
        self.note(f"Lane {task.id} merged ({outcome.sha[:12]}).")

    def _landing(self, task: TaskState, follow: bool) -> queue.Merged | queue.Refused | None:
        """Through the queue, the worst case of its manager calls (the review, and a follow-up
        should it be refused) held from the budget first; None when that does not fit: the lane
        waits in the queue, and the run ends on its budget (`run --resume` lands it)."""
        if not self.run.budget.ask(usd(self.run.call_usd * (1 + follow))):
            self.run.starved = NO_CALL
            self.note(f"Lane {task.id} waits in the queue: {NO_CALL}.")
            self.save()
            return None
        self.run.starved = ""  # the budget fits the manager again
        self.save()  # held on record: a driver killed meanwhile is charged all of it
        return metered(self.asker, f"lanes.land.{task.id}", self._queued, task)

    def _queued(self, task: TaskState) -> queue.Merged | queue.Refused:
        """The landing itself, one step: merge, checks, review, compare-and-swap."""
        if worktrees.merged(self.root, self.run.run, task.id):
            # Not a landing of ours cut short (`_landed_before`): the lane committed nothing.
            # A task is never taken as done unseen; the manager says what should happen.
            return queue.Refused("empty", EMPTY, "")
        return queue.land(
            self.root,
            self.run.run,
            task.id,
            checks=user_checks(list(self.run.checks)),
            checks_env=self.run.checks_env,
            review=lambda diff: self.asker.review(task.contract, diff),
            expected=self.run.integration,
        )

    def _refused(self, task: TaskState, refusal: queue.Refused, root: str) -> None:
        """Refused, never forced: the manager writes a follow-up for `root` ("": it has had its
        follow-ups) on the work merged so far."""
        task.state, task.why = "refused", f"refused ({refusal.reason}): {refusal.detail}"
        self.note(f"Lane {task.id} {task.why}")
        self.save()
        if not root:
            return
        new = self.asker.follow_up(task.contract, refusal.reason, refusal.detail, refusal.diff)
        spec = new.model_dump() | {"id": fresh_id(self.run, root), "depends_on": []}
        self.run.tasks.append(task_state(spec, follows=root))
        self.note(f"Follow-up task {spec['id']} for {root}: {new.title}")
