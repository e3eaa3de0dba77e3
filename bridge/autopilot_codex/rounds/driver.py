"""The loop over rounds behind `run` (`commands/run.py`), each round a fresh host process.

The driver owns the loop (the rounds' own Stop hooks never block: owner policy `driver`, told
by the environment below), so the host sessions keep the safety rails while the protocol —
markers, the git check of a verifier, retries, the wrap-up round, the caps — lives here.
A round gets no manager key (`cleanenv.for_round`); the driver commits its changes (`commit`)
and keeps the rollout and the handoff's objective in its own custody (`custody`).
Exit codes: complete 0, a round limit or a cap (budget, tokens, time) 2, error 1, interrupted 130.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from .. import cleanenv, defaults, hosts, meters, treewalk
from ..checks.run import CheckSpec, passed, status_line
from ..config import load_config
from ..errors import BridgeError
from ..gitrepo import head_sha, record_nested, toplevel
from ..hosts import hostfiles
from ..shadow.hook import at_round
from . import breaker, caps, rollout
from .accept import ManagerCheck as ManagerCheck
from .accept import manager_done, user_checks
from .commit import Committed, commit_round
from .custody import OBJECTIVE, ROLLOUT_NAME, Custody, restore_objective
from .decide import MAX_RETRIES, Next, RoundFacts, decide, first
from .handoff import WORKSPACE, Handoff, prepare, write_handoff
from .hold import hold, refuse_if_running, store_for
from .markers import Markers, parse, strip
from .prompts import round_prompt
from .run_state import UNCOUNTED, Run, capped, progress, resumed
from .runner import RoundResult, run_round
from .tree import changed_between, snapshot
from .view import View
from .walled import refuse_loosening, round_wall

EXIT_CODES = {
    "complete": 0,
    "round_limit": 2,
    "budget": 2,
    "tokens": 2,
    "duration": 2,
    "no_progress": 2,
    "error": 1,
    "tampered": 1,
    "interrupted": 130,
}
MESSAGE_KEPT = 4000
# The backoff's clock, replaced by tests.
sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class RunOptions:
    worktree: Path
    goal: str = ""
    implementer: str = defaults.HOST
    rounds: int = 10
    resume: bool = False
    budget_usd: float | None = None
    # The caps besides the budget (0 = none): the rounds' tokens, wall seconds since the start.
    max_tokens: int = 0
    max_seconds: float = 0.0
    # With `resume`: the caps given to raise (`caps.Raise`), checked against what was used.
    raised: caps.Raise = caps.Raise()
    # The manager backend's name, kept in the run's header ("none": no manager).
    manager: str = "none"
    timeout_s: float = 3600.0
    host_args: tuple[str, ...] | None = None
    max_retries: int = MAX_RETRIES
    # The user's checks (`--check`, config `checks`); a resumed run keeps its header's.
    checks: tuple[CheckSpec, ...] = ()
    # The config's `checks_env`: names the checks get on top of the scrubbed few.
    checks_env: tuple[str, ...] = ()
    # The wall `run` judged the rounds to run behind ("" when not judged), kept in the loop's
    # state so `status` and the rails say it.
    wall: str = ""
    wall_missing: tuple[str, ...] = ()
    # The circuit breaker's K (0: off) and the backoff's sleep and jitter; None: the
    # module's `sleep` and `random.random` (a test replaces the clock, never waits on it).
    no_progress_rounds: int = breaker.NO_PROGRESS_ROUNDS
    sleep: Callable[[float], None] | None = None
    jitter: Callable[[], float] | None = None


def custody_for(root: Path) -> Custody:
    """The runs' rollout of this worktree: in the state home, beside the loop's state."""
    return Custody(store_for(root).dir / "rounds")


def _begin(opts: RunOptions, root: Path, custody: Custody, now: float) -> tuple[Run, Next]:
    store = store_for(root)
    if opts.resume:
        runs, _ = custody.open(resume=True)
        log = runs[-1] if runs else None
        if log is None:
            raise BridgeError(f"nothing to resume: no run recorded in {custody.path}")
        raised = caps.raise_record(log, opts.raised, now)
        if raised is not None:
            custody.append(raised)
            log.raised(raised)
        return resumed(log, root, custody, store, opts.max_retries)
    if not opts.goal.strip():
        raise BridgeError("give the goal to run, or --resume")
    _, wrong = custody.open(resume=False)
    if wrong:
        store.append_event(
            "rounds.tamper", decision="set_aside", changed=[ROLLOUT_NAME], reason=wrong
        )
    handoff = write_handoff(root, Handoff(opts.goal), today=date.fromtimestamp(now))
    # What nested repositories hold as the run starts: the manager's check compares with it.
    record_nested(root, store.nested_path)
    header = rollout.RunHeader(
        kind="run",
        run=handoff.stem,
        goal=opts.goal,
        implementer=opts.implementer,
        rounds=opts.rounds,
        handoff=handoff.relative_to(root).as_posix(),
        base_sha=head_sha(root),
        started=now,
        budget_usd=opts.budget_usd,
        max_tokens=opts.max_tokens,
        max_seconds=opts.max_seconds,
        checks=list(opts.checks),
        checks_env=list(opts.checks_env),
        manager=opts.manager,
    )
    custody.append(header)
    return Run(header, root, custody, store), first(opts.rounds)


def _round_env(run: Run, round_no: int, env: Mapping[str, str]) -> dict[str, str]:
    """The round's environment: no manager key, no credential its host does not need."""
    return {
        **cleanenv.for_round(hosts.get(run.header.implementer).headless(), env),
        "AUTOPILOT_CODEX_OWNER": "driver",
        "AUTOPILOT_CODEX_RUN": run.header.run,
        "AUTOPILOT_CODEX_ROUND": str(round_no),
    }


def _launch(
    run: Run, step: Next, opts: RunOptions, view: View, env: Mapping[str, str]
) -> tuple[RoundResult, list[str]]:
    """Run the round's process; what it changed, from working-tree snapshots either side."""
    h = run.header
    round_no, attempt = run.rounds_used + 1, run.failures + 1
    prompt = round_prompt(
        h.handoff,
        verify=step.role == "verify",
        wrap_up=step.wrap_up,
        round_no=round_no,
        rounds=h.rounds,
        checks_red=run.checks_red,
    )
    view.round_started(round_no, h.rounds, step.role, attempt)
    # Written afresh for every round, in the state home the round cannot write.
    wall = run.wall.args(run.custody.path.parent) if run.wall is not None else []
    before = snapshot(run.root)
    result = run_round(
        h.implementer,
        prompt,
        cwd=run.root,
        env=_round_env(run, round_no, env),
        timeout_s=opts.timeout_s,
        extra_args=opts.host_args,
        wall_args=wall,
        on_update=view.update,
        own_prices=load_config(warnings=[]).implementer_prices,
        spent=run.spent_by,
        stderr_log=f"{WORKSPACE}/logs/{h.run}-round{round_no}-{attempt}.stderr",
    )
    return result, changed_between(run.root, before, snapshot(run.root))


def _guard(run: Run, round_no: int, view: View) -> list[str]:
    """Put back what a round changed of the driver's own files; their names.

    `round_no` 0: before the run's first round here (a resumed run's files may have changed
    between the two drivers)."""
    changed = []
    if run.custody.restore():
        changed.append(ROLLOUT_NAME)
    if restore_objective(run.root, run.header.handoff, run.header.goal):
        changed.append(OBJECTIVE)
    if changed:
        who = f"round {round_no}" if round_no else "something outside the driver"
        why = f"{who} changed the {' and the '.join(changed)}"
        run.store.append_event(
            "rounds.tamper", decision="restored", run=run.header.run, round=round_no,
            changed=changed, reason=why,
        )  # fmt: skip
        view.note(f"{why}: put back as the driver keeps it")
    return changed


def _commit(run: Run, result: RoundResult, round_no: int, view: View) -> str:
    """The driver's commit of what the round left uncommitted; its sha, "" for none."""
    try:
        done: Committed = commit_round(run.root, result.last_message, round_no, run.header.run)
    except BridgeError as exc:
        view.note(f"the driver could not commit round {round_no}'s changes: {exc}")
        return ""
    if done.left_out:
        view.note(f"left uncommitted (named like secrets): {', '.join(done.left_out)}")
    if done.nested:
        view.note(f"left as they are (nested repositories): {', '.join(done.nested)}")
    return done.sha


def _one_round(
    run: Run,
    step: Next,
    opts: RunOptions,
    view: View,
    env: Mapping[str, str],
    manager: ManagerCheck | None,
) -> Next:
    h = run.header
    round_no, attempt, started = run.rounds_used + 1, run.failures + 1, time.time()
    at_round(run.store, f"round {round_no} start", view.note)
    result, changed = _launch(run, step, opts, view, env)
    ok = result.outcome == "ok"
    tampered = _guard(run, round_no, view)
    at_round(run.store, f"round {round_no} end", view.note)
    sha = _commit(run, result, round_no, view) if ok else ""
    markers = parse(result.last_message) if ok else Markers()
    run.rounds_used += int(ok)
    if result.outcome not in UNCOUNTED:
        run.failures = 0 if ok else run.failures + 1
    run.rounds_usd += result.cost_usd or 0.0
    run.tokens += result.tokens or 0
    if ok:
        for unseen in caps.unseen(h, result.cost_usd, result.tokens, streamed=result.streamed):
            view.note(f"round {round_no}: {unseen}")
    verified = ok and markers.exit and step.role == "verify" and not changed
    checks = user_checks(run, view) if verified else []
    green = None if not checks else passed(checks)
    done, manager_before = None, run.manager_usd
    if manager is not None and verified and green is not False:
        done = manager_done(manager, run, view, checks)
    facts = RoundFacts(step.role, step.wrap_up, result.outcome, markers, bool(changed), done, green)
    nxt = decide(facts, progress(run, opts.max_retries))
    nxt = capped(run, _broken(run, step.role, nxt, result, changed, opts))
    record = rollout.RoundRecord(
        kind="round",
        run=h.run,
        round=round_no,
        attempt=attempt,
        role=step.role,
        wrap_up=step.wrap_up,
        start=started,
        end=time.time(),
        outcome=result.outcome,
        exit_code=result.exit_code,
        markers=markers.names(),
        files_changed=changed,
        cost_usd=result.cost_usd,
        tokens=result.tokens,
        last_action=result.last_action,
        message=result.last_message[-MESSAGE_KEPT:],
        next=nxt.action,
        detail=result.detail,
        checks_passed=green,
        checks=[status_line(c) for c in checks],
        tampered=tampered,
        commit=sha,
        manager_usd=run.manager_usd - manager_before,
        manager_done=done,
        unpriced=result.unpriced,
    )
    run.custody.append(record)
    if ok:
        run.message = strip(result.last_message)
    view.round_ended(record, run.cost_usd, strip(result.last_message) or result.detail)
    _back_off(run, nxt, result, opts, view)
    return nxt


def _broken(
    run: Run, role: str, nxt: Next, result: RoundResult, changed: Sequence[str], opts: RunOptions
) -> Next:
    """The circuit breaker (`breaker`): a run that keeps changing nothing, or keeps failing
    the same way, ends as `no_progress` instead of using up its rounds."""
    if result.outcome != "interrupted":
        run.fuse = breaker.observe(
            run.fuse,
            ok=result.outcome == "ok",
            changed=bool(changed),
            detail=result.detail,
            verify=role == "verify",
            limited=result.rate_limited,
        )
    ends = breaker.tripped(run.fuse, opts.no_progress_rounds) if nxt.runs_a_round else None
    return Next(*ends) if ends else nxt


def _back_off(run: Run, nxt: Next, result: RoundResult, opts: RunOptions, view: View) -> None:
    """Before retrying a round the provider rate-limited or was overloaded: wait."""
    if nxt.action != "retry":
        return
    wait = breaker.delay(
        result.detail,
        run.failures,
        jitter=opts.jitter or random.random,
        limited=result.rate_limited,
    )
    if wait > 0:
        view.note(f"rate limited or overloaded: waiting {wait:.1f}s before the retry")
        run.store.append_event("rounds.backoff", run=run.header.run, wait_s=round(wait, 3))
        (opts.sleep or sleep)(wait)


def run(
    opts: RunOptions,
    *,
    view: View,
    manager: ManagerCheck | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run (or resume) a rounds loop to its end; the final record, `exit_code` included."""
    env = dict(os.environ if env is None else env)
    started = meters.clock()
    root = toplevel(opts.worktree)
    refuse_if_running(root)
    if not opts.resume:
        refuse_loosening(opts.implementer, opts.host_args)
    prepare(root)
    custody = custody_for(root)
    with contextlib.ExitStack() as start:
        # One walk of the tree for the run's start, let go once the nested baseline, the wall's
        # nested git folders and the run files have read it.
        start.enter_context(treewalk.shared(root))
        state, step = _begin(opts, root, custody, started)
        h = state.header
        refuse_loosening(h.implementer, opts.host_args)
        state.wall = round_wall(h.implementer, root, env)
        plural = "" if h.rounds == 1 else "s"
        view.note(f"{h.rounds} round{plural} at most; handoff file {h.handoff}")
        # Held for the whole run, released however it ends: every round gets the rails.
        with hold(root, h.goal, h.run, h.rounds, (opts.wall, opts.wall_missing)) as held:
            try:
                # Before the first round too: a resumed run's handoff may have changed since.
                _guard(state, 0, view)
                if not opts.resume:
                    # What the rounds start from; a resumed run compares with its own start.
                    hostfiles.record(state.store)
                start.close()
                # Every cap before every round: a resumed run's clock may have run out meanwhile.
                step = capped(state, step)
                while step.runs_a_round:
                    # Before a round starts its host: a run file changed since the start stops it.
                    why = hostfiles.stop_if_changed(state.store, f"round {state.rounds_used + 1}")
                    step = Next("tampered", why) if why else step
                    if step.runs_a_round:
                        step = capped(state, _one_round(state, step, opts, view, env, manager))
            except KeyboardInterrupt:
                step = Next("interrupted", "interrupted")
            finally:
                view.close()
            held.status, held.why = step.action, step.why
    if step.action != "interrupted":
        custody.append(rollout.RunEnd(kind="end", run=h.run, status=step.action, end=time.time()))
    return {
        "status": step.action,
        "exit_code": EXIT_CODES[step.action],
        "why": step.why,
        "run": h.run,
        "implementer": h.implementer,
        "rounds_used": state.rounds_used,
        "rounds": h.rounds,
        "cost_usd": round(state.cost_usd, 6),
        "manager_usd": round(state.manager_usd, 6),
        "rounds_usd": round(state.rounds_usd, 6),
        "budget_usd": state.header.budget_usd,
        "tokens": state.tokens,
        "handoff": h.handoff,
        "rollout": str(custody.path),
        "duration_s": round(meters.clock() - started, 3),
        "message": state.message,
    }
