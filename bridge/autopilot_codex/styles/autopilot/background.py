"""The background review: a detached worker that reviews the task's diff while the implementer
goes on, so an edit never waits for the manager.

The PostToolUse hook takes the loop's in-flight slot and starts this worker; the worker
reviews the latest diff, and again while the diff keeps changing under it (a burst of edits
costs one or two reviews), then frees the slot. A fix or reject is kept as
`pending_review` until a hook that can speak hands it over (the next PostToolUse or the Stop).

While the manager thinks, a watcher thread follows state.json: when the loop stops, is
re-planned or the slot was reclaimed, the worker leaves at once, so nothing outlives the loop.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import detached
from ...config import for_loop
from ...guards import allow, charge
from ...hookio import HookInput
from ...meters import over, total_usd
from ...spend import usd
from ...state import State, now_iso
from . import findings_store, inflight, reducer
from .caps import fits, reserved
from .convergence import Rules
from .effects import loop_diff
from .record import of

if TYPE_CHECKING:
    from ...manager import Outcome
    from ...manager.prompts import Prompt
    from ...store import Store
    from ..context import HookContext

# Reviews one worker makes before it frees the slot: each one follows a change of the diff
# during the previous one, so this bounds a worker under an endless stream of edits.
MAX_ROUNDS = 4
# How often the watcher reads state.json while a call is out.
WATCH_S = 0.2
MODULE = "autopilot_codex.styles.autopilot.background"


# The worker's start: isolated (-I: no PYTHON* variables, no user site, no cwd or script
# directory on sys.path), with the plugin's own bridge/ directory put first by its location.
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    f"from {MODULE} import main; raise SystemExit(main(sys.argv[2:]))"
)


def spawn(store: Store, *, token: str, host: str, session: str) -> int:
    """Start the worker in its own session, no stdio: the host must not wait for it, nor
    kill it with the hook's process group. Its cwd is the loop's state directory, never the
    work tree, and it imports nothing from there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    store.dir.mkdir(parents=True, exist_ok=True)
    args = [str(store.worktree), token, host, session]
    # In a child of the resident helper, the helper forks it from its warm image.
    pid = detached.forked(MODULE, args, env, str(store.dir))
    if pid is not None:
        return pid
    bridge = str(Path(__file__).resolve().parents[3])
    argv = [sys.executable, "-I", "-c", _BOOT, bridge, *args]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=str(store.dir),
        start_new_session=True,
        close_fds=True,
    )
    # Reaped when it ends, should this process still be there (a hook is not: the worker is
    # then its init's to reap); a daemon thread never holds this process's exit.
    threading.Thread(target=proc.wait, daemon=True).start()
    return proc.pid


@dataclass(frozen=True)
class Round:
    """One review prepared under the lock, made without it."""

    state: State
    prompt: Prompt
    digest: str
    # The files the reviewed diff changed: the only ones a reject may restore.
    files: tuple[str, ...] = ()


def run(ctx: HookContext, token: str) -> int:
    """Review until the diff holds still, then free the slot. Always exits 0."""
    tried = ""
    try:
        for _ in range(MAX_ROUNDS):
            step = _prepare(ctx, token, tried)
            if step is None:
                return 0
            tried = step.digest
            outcome = _ask_watched(ctx, token, step)
            if not _apply(ctx, token, step, outcome):
                return 0
    finally:
        with ctx.store.locked():
            state = ctx.store.load(with_plan=False)
            if state is not None and inflight.holds(state, token):
                ctx.store.save(inflight.release(state, token))
    return 0


def _prepare(ctx: HookContext, token: str, tried: str) -> Round | None:
    """The next review, or None (slot freed in the same lock) when there is nothing to do."""
    from . import caps
    from .effects import diff_key, log_git_findings

    with ctx.store.locked():
        state = ctx.store.load(with_plan=False)
        if state is None or not inflight.holds(state, token):
            return None
        if state.status != "running":
            ctx.store.save(inflight.release(state, token))
            return None
        diff = loop_diff(ctx.store, of(state).task_base_sha)
        key = diff_key(diff)
        if diff.empty or key == tried or of(state).cached_review(key) is not None:
            # Nothing to review, or reviewed already (its answer was handed over then), or
            # its review just failed: the Stop tries again.
            ctx.store.save(inflight.release(state, token))
            return None
        state = ctx.store.with_plan(state)
        prompt = findings_store.review_prompt(ctx, state, diff.text, diff.files)
        estimate = caps.estimate(ctx, state, prompt)
        now = inflight.clock()
        if not fits(state, estimate, now):
            # Not a reason to stop the loop from the background: the Stop's guard says it.
            # Each hold's lines first: its one save seals them (one witness write).
            meter, why = _deferral(state, estimate, now)
            ctx.store.append_event(
                "review.deferred", reason=meter, why=why, session=ctx.payload.session_id
            )
            ctx.store.save(inflight.release(state, token))
            return None
        log_git_findings(ctx, diff)
        ctx.store.append_event("review.started", digest=key[:16], session=ctx.payload.session_id)
        state = ctx.store.save(inflight.reserve(state, token, estimate, key))
    return Round(state, prompt, key, diff.files)


def _deferral(state: State, estimate: float, now: float) -> tuple[str, str]:
    """The meter that keeps a review from starting (`budget`, `tokens`, `duration`) and why."""
    capped = over(state, now, None)
    if capped is not None:
        return capped[0].removeprefix("stopped_"), capped[1]
    left = max(0.0, state.budget_usd - total_usd(state) - reserved(state))
    return (
        "budget",
        f"{usd(left)} left beside the calls in flight; the review may cost {usd(estimate)}",
    )


def _ask_watched(ctx: HookContext, token: str, step: Round) -> Outcome[Any]:
    from ...manager import schemas

    done = threading.Event()
    args = (ctx.store, token, ctx.payload.session_id, done)
    watcher = threading.Thread(target=_watch, args=args, daemon=True)
    watcher.start()
    try:
        manager = ctx.manager(of(step.state).model, for_loop(step.state, os.environ, ctx.config))
        return manager.ask(schemas.Review, step.prompt.instructions, step.prompt.text)
    finally:
        done.set()


def _watch(store: Store, token: str, session: str | None, done: threading.Event) -> None:
    """Leave as soon as the call is moot: the loop stopped or moved on, or the slot is gone."""
    while not done.wait(WATCH_S):
        if _moot(store, token):
            _abandon(store, token, session)
            os._exit(0)


def _moot(store: Store, token: str) -> bool:
    try:
        state = store.load(with_plan=False)
    except Exception:  # noqa: BLE001 - a damaged state is the hooks' to report
        return True
    if state is None or state.inflight is None or state.inflight.token != token:
        return True
    return state.status != "running" or time.time() > state.inflight.deadline


def _abandon(store: Store, token: str, session: str | None) -> None:
    """Charge the reservation (the call's cost is unknown) and free the slot, if still ours."""
    with store.locked():
        state = store.load(with_plan=False)
        if state is None or not inflight.holds(state, token) or state.inflight is None:
            return
        reserved = state.inflight.reserved_usd
        # The event first: whoever sees the slot free can read why.
        store.append_event(
            "review.abandoned",
            charged_usd=round(reserved, 6),
            status=state.status,
            session=session,
        )
        store.save(inflight.release(charge(state, reserved), token))


def _apply(ctx: HookContext, token: str, step: Round, outcome: Outcome[Any]) -> bool:
    """Charge and record the review; True when the worker should look at the diff again."""
    from .effects import record

    with ctx.store.locked():
        state = ctx.store.load()
        if state is None or not inflight.holds(state, token):
            # Reclaimed: whoever reclaimed it charged the reservation for this call.
            return False
        state = inflight.settle(state, token)
        if state.generation != step.state.generation or state.status != "running":
            state = inflight.release(charge(state, outcome.cost_usd), token)
            record(ctx, state, allow("review.discarded"), outcome)
            ctx.store.save(state)
            return False
        now = now_iso()
        state, decision = reducer.apply_background_review(
            state, outcome, step.digest, now=now, changed_files=step.files
        )
        if outcome.value is not None:
            state, decision = findings_store.judged(
                ctx.store,
                (state, decision),
                outcome.value,
                diff_key=step.digest,
                now=now,
                changed_files=step.files,
                at_stop=False,
                head=None,
                rules=Rules.of(ctx.config),
                background=True,
            )
        record(ctx, state, decision, outcome)
        ctx.store.save(state)
        return True


def main(argv: list[str]) -> int:
    """`python -m ...background <worktree> <token> <host> <session>`, started by `spawn`."""
    from ... import hosts
    from ...config import load_with_warnings
    from ...crashlog import log_crash
    from ...store import Store
    from ..context import HookContext, selected_manager

    try:
        worktree, token, host, session = argv[:4]
        config, _ = load_with_warnings()
        store = Store(Path(worktree), lock_timeout=config.lock_timeout_s)
        payload = HookInput(event="PostToolUse", session_id=session or None, cwd=worktree)
        ctx = HookContext(payload, store, config, hosts.get(host), selected_manager)
        try:
            return run(ctx, token)
        finally:
            from ...announce import announce

            announce(store, "review")
    except Exception:  # noqa: BLE001 - nobody reads a detached worker's stderr
        log_crash("review worker")
        return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
