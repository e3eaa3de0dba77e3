"""Run one hook that passed the gate: parse, look up the host and the loop's style, dispatch,
render in the host's dialect, and always exit 0.

PreToolUse is answered by the rails alone, except a question to the user, which goes to the
loop's style like the loop's own events (the autopilot style has the manager answer it).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

# `styles`: every style's record is registered before any hook reads a loop's state.
from . import defaults, hookio, hosts, output, styles
from .admitted import Admitted
from .config import Config, load_with_warnings
from .errors import BridgeError
from .failclosed import COUNT_FILE
from .hookio import ALLOW, Answer
from .paths import project_dir
from .styles.context import HookContext, selected_manager

if TYPE_CHECKING:
    from .host import Host
    from .manager.select import ManagerFactory
    from .store import Store


def run_hook(argv: list[str], admitted: Admitted, manager: ManagerFactory | None = None) -> int:
    """A hook must never break the host's session: a failure becomes a non-blocking answer,
    except in a walled loop, where it denies or blocks (`failclosed`) and never wedges it."""
    event = argv[0] if argv else ""
    name = argv[argv.index("--host") + 1] if "--host" in argv[:-1] else defaults.HOST
    try:
        # The registry's table, read at the call (a test may register a host of its own).
        host = hosts.HOSTS.get(name)
    except BridgeError as exc:
        output.err(f"autopilot-codex: ignored a {event or 'hook'} call: {exc}")
        return 0
    try:
        payload = hookio.parse(admitted.raw, event, host)
        config, warning = load_with_warnings()
        answer = _answer(payload, admitted, config, host, manager).with_message(warning)
    except hookio.BadInput as exc:
        output.err(f"autopilot-codex: ignored a {event or 'hook'} call: {exc}")
        return 0
    except BridgeError as exc:
        said = f"autopilot-codex: {exc}"
        answer = _failed(event, admitted, said, Answer(message=said))
    except Exception as exc:  # noqa: BLE001 - a hook must answer whatever happens
        from .crashlog import log_crash
        from .failclosed import describe

        what = describe(event, exc, str(log_crash(f"hook {event}")))
        output.err(what)
        answer = _failed(event, admitted, what, ALLOW)
    else:
        if event == "Stop":
            # A Stop answered: the next crash starts a new run of blocks (`failclosed`).
            with contextlib.suppress(OSError):
                (project_dir(admitted.worktree) / COUNT_FILE).unlink()
    output.out(host.render(event, answer))
    return 0


def _failed(event: str, admitted: Admitted, what: str, unguarded: Answer) -> Answer:
    """The answer to a hook that failed: in a walled loop never an allow (`failclosed`);
    in an unguarded one, `unguarded` (today's non-blocking answer)."""
    from .failclosed import verdict, walled

    if not walled(admitted.worktree):
        return unguarded
    kind, line = verdict(event, admitted.worktree, what)
    if kind == "deny":
        return Answer(deny=line)
    if kind == "block":
        return Answer(block=line)
    return Answer(message=line)


def _answer(
    payload: hookio.HookInput,
    admitted: Admitted,
    config: Config,
    host: Host,
    manager: ManagerFactory | None,
) -> Answer:
    worktree = Path(admitted.worktree)
    said = _repair(worktree, config) if admitted.repair else ""
    answer, store = _dispatch(payload, admitted, config, host, manager)
    if store is not None and store.moved:
        from .announce import announce

        announce(store, payload.event)
    return answer.with_message(said)


def _dispatch(
    payload: hookio.HookInput,
    admitted: Admitted,
    config: Config,
    host: Host,
    manager: ManagerFactory | None,
) -> tuple[Answer, Store | None]:
    """The answer, and the store it went through (whose status changes are told)."""
    from .store import Store

    worktree = Path(admitted.worktree)
    if payload.event == "PreToolUse":
        from .rails.judge import check

        denial = check(payload, config, worktree, hosts.roster(), host)
        if denial:
            return Answer(deny=denial), None
        from .shadow.hook import before_tool

        before_tool(worktree, payload.tool_name, host, max(config.lock_timeout_s, 20.0))
        # A question to the user is the loop's style's to answer; any other tool the rails'.
        if payload.tool_name not in host.question_tools:
            return ALLOW, None

    if payload.event == "SessionEnd":
        from .session_end import ended

        store = Store(worktree, lock_timeout=config.lock_timeout_s)
        return ended(store, payload, host), store
    from .shadow.hook import at_hook

    # Before the style answers: a Stop's verdict hears what the turn's snapshots found lost.
    said = at_hook(payload, worktree, host, config.lock_timeout_s)
    if payload.event == "UserPromptSubmit":
        store = Store(worktree, lock_timeout=config.lock_timeout_s)
        return _typed(store, payload.session_id, host.name).with_message(said), store
    # The one hop from the entrance into the loop's style. The entrance builds no store for
    # it: the style's first use does (`HookContext.store`), so a Stop that holds its loop once
    # comes to the store once, and one that takes no lock (rounds) not at all.
    handle = styles.STYLES.get(admitted.style).handle
    ctx = HookContext(payload, None, config, host, manager or selected_manager, worktree)
    # The store the style wrote through, if it built one: its status changes are told.
    return handle(ctx).with_message(said), ctx.built


def _repair(worktree: Path, config: Config) -> str:
    """A marker of this loop went missing or changed: put it back before answering, and say
    what tamper evidence found. A failure here must not cost the hook its answer (the rails
    still judge this call)."""
    from .store import Store

    try:
        said = Store(worktree, lock_timeout=config.lock_timeout_s).repair_markers()
    except (BridgeError, OSError):
        from .crashlog import log_crash

        log_crash("marker repair")
        return ""
    return f"autopilot-codex: {said}" if said else ""


def _typed(store: Store, session_id: str | None, host: str) -> Answer:
    """A prompt the user typed claims an unowned loop for its session (`guards.claim`)."""
    from . import guards

    with store.locked():
        state = store.load(with_plan=False)
        claimed = guards.claim(state, session_id, host, typed=True) if state is not None else None
        if claimed is None or claimed is state:
            return ALLOW
        store.save(claimed)
        store.append_event("claim", decision="owned", session=session_id, via="UserPromptSubmit")
    return ALLOW
