"""The user's checks as a loop runs them at a Stop: within the hook's time, cached by tree,
one ledger line per fresh run. The checks themselves are `checks`; this is the loop's side.

Only `State.checks` is ever run, and only the user fills it (`--check`, config `checks`).
"""

from __future__ import annotations

from pathlib import Path

from .. import witness, witness_key
from ..config import check_specs, config_file, load_config
from ..errors import BridgeError
from ..state import State
from ..store import Store
from .run import CheckResult, CheckSpec, run_checks, spec, status_line
from .watch import Snapshot, Watch, appended, read

# The host kills a Stop hook after this many seconds (hooks/hooks.json, hooks/codex.json).
HOOK_TIMEOUT_S = 600.0
# Kept free for git, the lock, the state file and the answer after the checks and the calls.
MARGIN_S = 45.0
# Even a hook whose manager calls may take nearly all of its time gives the checks this much;
# a check that does not fit is reported as timed out, never passed.
MIN_BUDGET_S = 15.0


def budget_s(manager_calls: int, call_timeout_s: float) -> float:
    """What the checks may take in all, so the hook's manager calls still fit its timeout."""
    left = HOOK_TIMEOUT_S - MARGIN_S - manager_calls * call_timeout_s
    return max(MIN_BUDGET_S, left)


def gather(
    store: Store, state: State, *, manager_calls: int, call_timeout_s: float
) -> tuple[State, list[CheckResult]]:
    """Run the loop's checks unless the tree is the one they last ran on; the state keeps them.

    Returns the state with `last_checks` set (not saved) and the results; no checks, no run.
    """
    specs: list[CheckSpec] = state.checks
    if not specs:
        return state, []
    watch = store_watch(store)
    results = run_checks(
        Path(store.worktree),
        specs,
        previous=state.last_checks,
        budget_s=budget_s(manager_calls, call_timeout_s),
        exclude=store.excluded(),
        watch=watch,
        env_names=load_config(warnings=[]).checks_env,
    )
    record_tamper(store, watch)
    if results != state.last_checks:
        for result in results:
            store.append_event(
                "checks.run",
                status=result.status,
                command=result.command,
                exit_code=result.exit_code,
                duration_s=result.duration_s,
                line=status_line(result),
                # Each run keeps its own output: the state keeps only the last run's.
                tail=result.tail,
            )
    return state.evolve(last_checks=results), results


def store_watch(store: Store, extra: tuple[Path, ...] = ()) -> Watch:
    """The loop's config and state files, watched while checks run.

    Excused: an append to the ledger, and a new state (with its witness and marker) that the
    witness vouches for, which is how a bridge process saving meanwhile leaves them. A marker
    or witness changed under an unchanged state is never the bridge's.
    """
    state_files = (store.state_path, store.witness_path, store.marker, store.rails)

    def excused(path: Path, before: Snapshot) -> bool:
        if path == store.events_path:
            return appended(before.get(path), read(path))
        if path not in state_files:
            return False
        now = read(store.state_path)
        if now is None or now == before.get(store.state_path):
            return False
        try:
            seen = witness.read(store.witness_path, witness_key.load(store.home).secret)
        except (witness.Damaged, BridgeError, OSError):
            return False
        return seen is not None and seen.vouches(now.decode("utf-8", "surrogateescape"))

    files = (
        config_file(store.home),
        *state_files,
        store.plan_path,
        store.plan_path.with_name("plan.json.bridge"),
        store.events_path,
        store.result_path,
        *extra,
    )
    return Watch(files, excused)


def record_tamper(store: Store, watch: Watch) -> None:
    """One ledger line per check that changed the loop's files (put back already)."""
    for command, names in watch.tampered:
        store.append_event(
            "checks.tamper",
            decision="fail",
            command=command,
            changed=names,
            reason=f"a check changed {', '.join(names)}; put back as it was",
        )


def user_checks(flags: list[str] | None) -> list[CheckSpec]:
    """The `--check` flags, or else the config's `checks` (a bad config entry is refused)."""
    if flags is not None:
        return [spec(command) for command in flags]
    # The rest of the config does not concern ralph; only a bad `checks` entry stops it.
    warnings: list[str] = []
    config = load_config(warnings=warnings)
    bad = [w for w in warnings if "checks" in w]
    if bad:
        raise BridgeError(bad[0])
    return check_specs(config)
