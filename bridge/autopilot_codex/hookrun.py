"""Run one hook that passed the gate: parse, dispatch, and always answer with exit 0.

PreToolUse is answered by the rails alone; only the loop's own events load the engine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import hookio, output
from .config import Config, load_config
from .errors import BridgeError
from .gate import Admitted
from .paths import state_home

if TYPE_CHECKING:
    from .manager.select import ManagerFactory


def run_hook(argv: list[str], admitted: Admitted, manager: ManagerFactory | None = None) -> int:
    """A hook must never break the host's session: every failure becomes a non-blocking answer."""
    event = argv[0] if argv else ""
    host = argv[argv.index("--host") + 1] if "--host" in argv[:-1] else "claude"
    try:
        payload = hookio.parse(admitted.raw, event)
        config, warning = _config()
        answer = _answer(payload, Path(admitted.worktree), config, host, manager)
        text = hookio.add_message(answer, warning)
    except hookio.BadInput as exc:
        output.err(f"autopilot-codex: ignored a {event or 'hook'} call: {exc}")
        return 0
    except BridgeError as exc:
        text = hookio.render_allow(f"autopilot-codex: {exc}", host)
    except Exception as exc:  # noqa: BLE001 - a hook must answer whatever happens
        log = _log_crash(event)
        output.err(f"autopilot-codex: internal error ({type(exc).__name__}); details in {log}")
        text = ""
    output.out(text)
    return 0


def _answer(
    payload: hookio.HookInput,
    worktree: Path,
    config: Config,
    host: str,
    manager: ManagerFactory | None,
) -> str:
    if payload.event == "PreToolUse":
        from .rails import check

        denial = check(payload, config, worktree)
        return hookio.render_deny(denial, host) if denial else ""
    from . import hooks
    from .state import Store

    store = Store(worktree, lock_timeout=config.lock_timeout_s)
    context = hooks.Context(payload, store, config, manager or hooks.default_manager)
    return hooks.handle(context, host)


def _config() -> tuple[Config, str]:
    """A broken setting must not switch the rails off: fall back to the defaults, and say so."""
    try:
        return load_config(), ""
    except BridgeError as exc:
        return Config(), f"autopilot-codex: {exc}; using the default settings"


def _log_crash(event: str) -> Path:
    import traceback

    log = state_home() / "logs" / "bridge.log"
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as handle:
            from . import __version__

            handle.write(f"--- autopilot-codex {__version__} hook {event} pid {os.getpid()}\n")
            handle.write(traceback.format_exc())
    except OSError:
        pass
    return log
