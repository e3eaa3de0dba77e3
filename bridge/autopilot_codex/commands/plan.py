"""`plan`: ask the manager for a plan of the goal and start an autopilot loop."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import contract, defaults, gitrepo
from ..checks.run import CheckSpec
from ..config import load_config
from ..credentials import redact
from ..errors import BridgeError
from ..hostwall import HostWall, headline, host_wall
from ..manager import prompts
from ..manager.select import selected
from ..spend import usd
from ..state import Plan, State, Task
from ..store import Store
from ..styles.autopilot import reducer
from ..styles.autopilot.record import of, position_of, task_of
from . import begin, entry, replaced, worktree_of
from .doctor_jail import jail_notes
from .plan_dirty import give_back, settle

if TYPE_CHECKING:
    from ..config import Config
    from ..manager import Outcome
    from ..manager.select import ManagerFactory


def goal_limit(config: Config) -> int:
    """The longest goal sent whole: it is in every prompt, and a quarter of the prompt cap
    still leaves the plan outline, the task contract and the diff their room."""
    return config.prompt_chars // 4


def read_goal(words: list[str], goal_file: str | None, cwd: str | Path, stdin: str | None) -> str:
    """The goal from the command line, a file (`--goal-file PATH`) or stdin (`-`): a shell
    argument tops out near 128 KiB, a long spec does not have to."""
    if goal_file is not None:
        if words:
            raise BridgeError("give the goal either as words or with --goal-file, not both")
        path = Path(cwd) / goal_file
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BridgeError(
                f"cannot read the goal file {path}: {getattr(exc, 'strerror', None) or exc}"
            ) from exc
    if words == ["-"]:
        if stdin is None:
            raise BridgeError("`-` reads the goal from stdin, which --args-stdin already used")
        return stdin
    return " ".join(words)


def plan(
    *,
    cwd: str | Path,
    goal: str,
    overrides: dict[str, Any],
    session_id: str | None,
    host: str = defaults.HOST,
    manager: ManagerFactory = selected,
    require_wall: bool = False,
    dirty: str | None = None,
) -> str:
    # The goal is stored and shown; a credential pasted into it must not be.
    goal = redact(goal.strip())
    worktree = worktree_of(cwd)
    config = load_config(overrides)
    _refuse_unusable(goal, config, manager)
    wall = judge_wall(host, worktree, require_wall)
    store = Store(worktree, lock_timeout=config.lock_timeout_s)
    with store.locked():
        previous = replaced(store, _running)
    # Before the paid call: a stash changes what the plan starts from.
    dirty_lines = settle(worktree, dirty)
    stashed = dirty == "stash" and bool(dirty_lines)
    try:
        return _planned(
            worktree, goal, config, manager, store, previous, session_id, host, wall, dirty_lines
        )
    except BridgeError as exc:
        if not stashed:
            raise
        raise BridgeError(f"{exc}\n{give_back(worktree)}") from exc


def _planned(
    worktree: Path,
    goal: str,
    config: Config,
    manager: ManagerFactory,
    store: Store,
    previous: State | None,
    session_id: str | None,
    host: str,
    wall: HostWall,
    dirty_lines: list[str],
) -> str:
    """The plan call and the new loop's state, once the tree is as the plan starts from."""
    base = gitrepo.head_sha(worktree)
    # The base's objects into the bridge's own store, each hashed: the reviews read them there.
    gitrepo.keep_base(worktree, base)
    # What nested repositories hold as the loop starts: the review compares their files with it.
    gitrepo.record_nested(worktree, store.nested_path)
    outcome = _ask_for_plan(worktree, goal, config, manager, store)
    assert outcome.value is not None
    planned: Plan = Plan.of(outcome.value)
    state = reducer.start(
        goal=goal,
        plan=Plan(summary=planned.summary, tasks=_unique_ids(planned.tasks)),
        base_sha=base,
        worktree=str(worktree),
        config=config,
        cost_usd=outcome.cost_usd,
        session_id=session_id,
        host=host,
        generation=(previous.generation + 1) if previous else 1,
    ).evolve(wall=wall.level, wall_missing=list(wall.missing))
    with store.locked():
        current = store.load()
        if current is not None and current.status == "running":
            raise BridgeError(f"a loop started here meanwhile; stop it first with {entry('stop')}")
        state, accepted = begin(
            store,
            state,
            "plan",
            tasks=len(state.plan.tasks),
            tokens_in=outcome.usage.input_tokens,
            tokens_out=outcome.usage.output_tokens,
            cost_usd=round(outcome.cost_usd, 6),
            wall=wall.level,
        )
    from ..shadow.hook import at_start

    shadow = at_start(store, "plan")
    return "\n".join(
        [
            *jail_notes(),
            *dirty_lines,
            render_plan(state),
            checks_note(state.checks, worktree),
            *wall_lines(wall),
            *([shadow] if shadow else []),
            *([accepted] if accepted else []),
        ]
    )


def judge_wall(host: str, worktree: Path, require: bool, flag: Any = None) -> HostWall:
    """The wall this loop will run behind; with `require`, refuse (before any paid call) to
    start without one."""
    wall = host_wall(host, worktree, flag=flag)
    if flag is None:
        from .wall_install import extend

        wall = extend(wall, worktree)
    if require and not wall.walled:
        raise BridgeError(
            "--require-wall: this loop would run unguarded, so it was not started.\n"
            + headline(wall)
        )
    return wall


def wall_lines(wall: HostWall) -> list[str]:
    """The wall's status, and the key's when the implementer can read it."""
    from .. import credentials

    lines = [headline(wall)]
    if credentials.exposed():
        lines.append("Key: " + credentials.exposure_note())
    return lines


def _refuse_unusable(goal: str, config: Config, manager: ManagerFactory) -> None:
    """Before any paid call: no goal, a goal that cannot reach the manager whole, or a manager
    that cannot answer."""
    if not goal:
        raise BridgeError(f"give a goal: {entry('plan')} <goal> [--budget USD]")
    if len(goal) > goal_limit(config):
        raise BridgeError(
            f"the goal is {len(goal):,} characters; at most {goal_limit(config):,} fit the "
            f"manager's prompt (a quarter of prompt_chars={config.prompt_chars}): shorten it, "
            "or raise AUTOPILOT_CODEX_PROMPT_CHARS"
        )
    if manager is selected:
        from ..manager.select import configured_problem

        if problem := configured_problem(config):
            raise BridgeError(problem)


def _ask_for_plan(
    worktree: Path, goal: str, config: Config, manager: ManagerFactory, store: Store
) -> Outcome[Any]:
    """The plan call, refused up front when even its worst case would exceed the budget."""
    files, count = gitrepo.tracked_files(worktree)
    recent = gitrepo.commits_since(worktree, gitrepo.EMPTY_TREE, limit=10)
    prompt = prompts.plan_prompt(goal, files, count, recent, config.prompt_chars)
    # A plan is the one long answer: give it room, and budget for that room.
    config = dataclasses.replace(config, max_output_tokens=config.plan_output_tokens)
    from ..manager.select import worst_case_usd

    # The selected backend's price, and what it sends and may answer beyond our own caps.
    estimate = worst_case_usd(
        config, config.model, prompt.instructions + prompt.text, config.max_output_tokens
    )
    if estimate > config.budget_usd:
        raise BridgeError(
            f"the budget ${config.budget_usd:.2f} cannot cover even the plan (~${estimate:.2f})"
        )
    from ..manager import schemas

    outcome = manager(config.model, config).ask(schemas.Plan, prompt.instructions, prompt.text)
    if outcome.value is None or not outcome.value.tasks:
        error = outcome.error or "the plan had no tasks"
        store.append_event("plan.failed", error=error, cost_usd=round(outcome.cost_usd, 6))
        raise BridgeError(
            f"the manager could not plan: {error} (spent {usd(outcome.cost_usd)}); no loop started"
        )
    return outcome


def _running(previous: State) -> str:
    return (
        f"a loop is already running here (goal: {contract.clip(previous.goal, 80)}); "
        f"stop it first with {entry('stop')}"
    )


def _unique_ids(tasks: list[Task]) -> list[Task]:
    ids = [t.id.strip() for t in tasks]
    if all(ids) and len(set(ids)) == len(ids):
        return tasks
    return [t.evolve(id=f"T{i}") for i, t in enumerate(tasks, 1)]


def checks_note(specs: list[CheckSpec], worktree: Path) -> str:
    """Which checks the loop runs; with none, the one `detect_check` proposes, not run."""
    if specs:
        listed = ", ".join(f"`{s.command}`" for s in specs)
        return f"Checks run by the bridge before it believes done: {listed}."
    from shlex import quote

    from ..checks.detect import detect_check

    found = detect_check(worktree)
    if found is None:
        return "No checks: the manager judges done from the diff alone (see --check)."
    return (
        f"No checks configured. This project looks tested by `{found}`; to make the loop run "
        f"it before believing done: --check {quote(found)} (or `checks` in the config). "
        "Nothing runs it until you do."
    )


def render_plan(state: State) -> str:
    task = task_of(state)
    assert task is not None
    lines = [
        f"autopilot-codex: loop started. Budget ${state.budget_usd:.2f}, at most "
        f"{state.max_iterations} iteration{'' if state.max_iterations == 1 else 's'}, review mode {of(state).review_mode}, manager {of(state).model}.",
        f"Goal: {state.goal}",
        f"Plan: {state.plan.summary}",
        *(f"  {'>' if t.id == task.id else ' '} {t.id}: {t.title}" for t in state.plan.tasks),
        "",
        "Implement this task now:",
        contract.task_contract(task, position_of(state)),
        "",
        "Every edit is reviewed by the manager; when you end your turn it decides whether to "
        "continue, finish or abort. Follow its feedback.",
    ]
    if not state.session_id:
        lines += [
            "",
            "No session owns this loop yet: the first session you type a prompt into in this "
            "worktree does (or plan with --session-id ID). Sessions started by the implementer "
            "never claim it.",
        ]
    return "\n".join(lines)
