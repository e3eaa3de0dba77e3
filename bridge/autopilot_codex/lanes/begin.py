"""How a lanes run begins: planned anew (one manager call, its worst case held from the one
budget first), or taken up again by `run --resume` from its record.

Every manager call of a run is held to the budget before it is made: its worst case
(`worst_usd`: the prompt bounded by `prompt_chars`, the answer by its output cap, priced as
the budget guard prices) is set aside, and a call that does not fit is never made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import defaults
from ..durable.steps import step
from ..errors import BridgeError
from ..gitrepo import head_sha, run_git
from ..rounds.hold import store_for
from . import graph
from .ask import Asker
from .budget import Amount, Budget, cap
from .record import FOLDER, LanesRun, TaskState, load

if TYPE_CHECKING:
    from ..config import Config

Note = Callable[[str], None]


@dataclass(frozen=True)
class LanesOptions:
    worktree: Path
    goal: str = ""
    implementer: str = defaults.HOST
    # The manager backend's name, kept so `run --resume` asks the same one.
    manager: str = ""
    lanes: int = 1
    lane_usd: float | None = None
    budget_usd: float | None = None
    max_tokens: int = 0
    max_seconds: float = 0.0
    round_timeout_s: float = 3600.0
    # A lane whose log has not grown for this long is stopped (its process group).
    silent_s: float = 3600.0
    checks: tuple[str, ...] = ()
    checks_env: tuple[str, ...] = ()
    resume: bool = False
    rounds: int = 0
    host_args: tuple[str, ...] = ()
    require_wall: bool = False


def home_of(root: Path) -> Path:
    """Where a repository's lanes run keeps its record and its lanes' output."""
    return store_for(root).dir / FOLDER


def worst_usd(config: Config, output_tokens: int) -> float:
    """The most one manager call of the lanes could cost: every prompt of theirs is bounded by
    `prompt_chars`, its answer by `output_tokens`."""
    from ..manager.select import worst_case_usd

    return worst_case_usd(config, config.model, "x" * config.prompt_chars, output_tokens)


def usd(amount: float) -> Amount:
    return Amount(amount, 0.0, 0.0)


def refuse_unfinished(root: Path) -> None:
    last = load(home_of(root))
    if last is not None and last.status in ("running", "interrupted"):
        raise BridgeError("a lanes run is unfinished here: continue it with run --resume")


def _facts(root: Path) -> tuple[str, str]:
    """The user's branch and its head as the run starts (a step: a recovered run keeps them)."""
    user_branch = run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1))
    if not user_branch.strip():
        raise BridgeError("lanes need a branch checked out (HEAD is detached)")
    return user_branch.strip(), head_sha(root)


def planned(
    root: Path,
    opts: LanesOptions,
    asker: Asker,
    note: Note,
    *,
    run_id: str = "",
    checked: bool = False,
) -> LanesRun:
    """A new run, planned. `checked`: the caller refused an unfinished run already (a durable
    run, recovered, must not refuse its own record)."""
    if not checked:
        refuse_unfinished(root)
    user_branch, user_sha = step("lanes.begin", _facts, root)
    budget = Budget(cap(opts.budget_usd, opts.max_tokens, opts.max_seconds))
    # The plan is the one long answer: its worst case counts its own output cap.
    worst = worst_usd(asker.config, asker.config.plan_output_tokens)
    if not budget.ask(usd(worst)):
        raise BridgeError(
            f"the budget ${budget.limit.usd:.2f} cannot cover even the plan (~${worst:.2f})"
        )
    plan = asker.plan(root, opts.goal)
    budget.answered()
    budget.charge(usd(asker.cost_usd))
    note(f"Plan: {len(plan.tasks)} tasks; {opts.lanes} lanes at most.")
    return LanesRun(
        run=run_id or new_run_id(),
        goal=opts.goal,
        implementer=opts.implementer,
        manager=opts.manager,
        lanes=opts.lanes,
        user_branch=user_branch,
        user_sha=user_sha,
        budget=budget,
        tasks=[task_state(t.model_dump()) for t in plan.tasks],
        checks=list(opts.checks),
        round_timeout_s=opts.round_timeout_s,
        silent_s=opts.silent_s,
        lane_usd=opts.lane_usd,
        manager_calls=asker.calls,
        checks_env=list(opts.checks_env),
        rounds=opts.rounds,
        host_args=list(opts.host_args),
        require_wall=opts.require_wall,
    )


def new_run_id() -> str:
    return time.strftime("lanes-%Y%m%d-%H%M%S")


def resumed(home: Path, opts: LanesOptions, last: LanesRun | None = None) -> LanesRun:
    """The run to go on with: `last` (a durable run's latest record, from its database) or the
    record in `home`, with what `run --resume` may change."""
    run = last or load(home)
    if run is None or run.status == "complete":
        raise BridgeError("no unfinished lanes run to resume here")
    run.status, run.why, run.starved = "running", "", ""
    # A manager call the driver's death cut short may have cost all it held.
    run.budget.charge(run.budget.asking)
    run.budget.answered()
    if opts.lanes > 1:
        run.lanes = opts.lanes
    # A resume may ask for the wall, or give the host's flags again; it never drops either.
    run.require_wall = run.require_wall or opts.require_wall
    if opts.host_args:
        run.host_args = list(opts.host_args)
    if opts.budget_usd is not None:
        # A run that ended on its budget goes on with a larger one.
        limit = run.budget.limit
        run.budget.limit = Amount(opts.budget_usd, limit.tokens, limit.seconds)
    return run


def task_state(spec: dict[str, Any], follows: str = "") -> TaskState:
    from ..manager.schemas import Task

    task = Task.model_validate(spec)
    return TaskState(
        id=task.id.strip(),
        title=task.title,
        depends_on=list(task.depends_on),
        contract=graph.contract(task),
        spec=spec,
        follows=follows,
    )


def fresh_id(run: LanesRun, root: str) -> str:
    """A follow-up's id: the first `<root>-fix<n>` no task of the plan holds (a planned task
    may bear that name), compared as the graph compares ids."""
    taken = {t.id.strip().casefold() for t in run.tasks}
    n = 1 + sum(1 for t in run.tasks if t.follows == root)
    while f"{root}-fix{n}".casefold() in taken:
        n += 1
    return f"{root}-fix{n}"


@dataclass(frozen=True)
class _Graph:
    tasks: list[Any]


def planned_graph(run: LanesRun) -> _Graph:
    """The run's tasks as the graph reads them (each as the manager planned it)."""
    from ..manager.schemas import Task

    return _Graph([Task.model_validate(t.spec) for t in run.tasks])
