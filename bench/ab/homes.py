"""A trial's own state home: the user's settings and stored manager login carried in, plus the
hidden tests' places on the wall's list of what the implementer may not read. Every trial gets
a fresh one, so no trial sees another's loop and the user's own loops are never touched."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from autopilot_codex import credentials
from autopilot_codex.config import config_file
from autopilot_codex.errors import BridgeError

from .workdir import TrialSetupError


def _user_config() -> dict[str, Any]:
    try:
        data = json.loads(config_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def make(home: Path, hidden: Sequence[Path]) -> None:
    """The trial's state home at `home`: the user's config (model, review mode, prices, ...)
    with `hidden` added to `wall_deny_read`, and the user's stored login (`autopilot-codex
    login`), if any. Read from the state home this process names, before any trial's."""
    config = _user_config()
    kept = config.get("wall_deny_read")
    kept = [p for p in kept if isinstance(p, str)] if isinstance(kept, list) else []
    config["wall_deny_read"] = [*kept, *(str(p) for p in hidden)]
    stored = credentials.load()
    home.mkdir(parents=True)
    (home / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    if stored is not None:
        try:
            credentials.save(stored, home)
        except BridgeError as exc:
            raise TrialSetupError(f"the manager's login cannot be kept for the trial: {exc}") from exc


@contextlib.contextmanager
def named(home: Path) -> Iterator[None]:
    """This process names `home` as its state home meanwhile: the wall is judged from the
    config of the state home the process names."""
    before = os.environ.get("AUTOPILOT_CODEX_HOME")
    os.environ["AUTOPILOT_CODEX_HOME"] = str(home)
    try:
        yield
    finally:
        if before is None:
            del os.environ["AUTOPILOT_CODEX_HOME"]
        else:
            os.environ["AUTOPILOT_CODEX_HOME"] = before
