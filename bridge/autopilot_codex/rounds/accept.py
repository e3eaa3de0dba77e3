"""Whether a verifier's exit is accepted: the user's checks must pass, then the manager must
call the whole diff since the start done (`driver`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..checks.evidence import record_tamper, store_watch
from ..checks.run import CheckResult, failure_reason, run_checks, status_line
from ..checks.tree import tree_hash
from ..errors import BridgeError
from . import caps
from .handoff import WORKSPACE
from .run_state import Run
from .view import View

# (worktree, base sha) -> is the whole diff since the start done? The lead wires the manager.
ManagerCheck = Callable[[Path, str], bool]


def manager_done(
    manager: ManagerCheck, run: Run, view: View, checked: Sequence[CheckResult] = ()
) -> bool:
    """The manager's word on the whole diff; an unreachable manager accepts nothing, nor is a
    manager asked once a cap is reached (the run then ends at that cap).

    A check that keeps a `cost_usd` tally (the configured backends) is charged to the run,
    and told the budget left so it never makes a call the budget cannot cover.
    """
    capped = caps.capped(run.reading())
    if capped is not None:
        view.note(f"the manager is not asked, the exit is not accepted: {capped.why}")
        return False
    budget = run.header.budget_usd
    if hasattr(manager, "budget_left"):
        manager.budget_left = None if budget is None else max(0.0, budget - run.cost_usd)
    spent = float(getattr(manager, "cost_usd", 0.0))
    # The tree judged: the trees the checks' run began on and left, else its digest now. A
    # process a round left running that changes it meanwhile gets no exit accepted.
    looked = [h for r in checked for h in (r.tree_hash, r.tree_hash_after)]
    looked = looked or [tree_hash(run.root, exclude=(WORKSPACE,))]
    try:
        done = manager(run.root, run.header.base_sha)
    except BridgeError as exc:
        view.note(f"manager unavailable, the exit is not accepted: {exc}")
        return False
    finally:
        run.manager_usd += float(getattr(manager, "cost_usd", 0.0)) - spent
    if done and tree_hash(run.root, exclude=(WORKSPACE,)) not in looked:
        view.note("the work tree changed while the manager judged it, the exit is not accepted")
        return False
    return done


def user_checks(run: Run, view: View) -> list[CheckResult]:
    """The user's checks after a verifier's exit: an exit is accepted only when they pass."""
    specs = run.header.checks
    if not specs:
        return []
    watch = store_watch(run.store, (run.custody.path, run.custody.digest_path))
    results = run_checks(
        run.root, specs, exclude=(WORKSPACE,), watch=watch, env_names=run.header.checks_env
    )
    record_tamper(run.store, watch)
    for r in results:
        view.note(f"check: {status_line(r)}")
    run.checks_red = failure_reason(results)
    return results
