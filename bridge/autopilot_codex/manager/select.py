"""Which manager backend a loop talks to: a registry, so a backend is one module and one line.

Nothing here imports a backend until a call is about to be made: hooks that never reach the
manager must not pay for `openai`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import BridgeError

if TYPE_CHECKING:
    from ..config import Config
    from . import Manager

# (model, config) -> a Manager. Tests pass their own; hooks and commands use `select(config)`.
ManagerFactory = Callable[[str, "Config"], "Manager"]

# backend name -> module defining `make(model, config) -> Manager` and `problem(config) -> str | None`.
BACKENDS: dict[str, str] = {
    "openai": "autopilot_codex.manager.openai_backend",
    "codex": "autopilot_codex.manager.codex_backend",
}


def backend_name(config: Config) -> str:
    """The configured backend; with none configured, `openai` when a key is set, else `codex`
    when it is installed and logged in, else `openai` (whose problem names the missing key)."""
    if config.manager:
        return config.manager
    if os.environ.get("OPENAI_API_KEY", "").strip() or "codex" not in BACKENDS:
        return "openai"
    codex_problem: Callable[[Config], str | None] = importlib.import_module(
        BACKENDS["codex"]
    ).problem
    return "openai" if codex_problem(config) else "codex"


def select(config: Config) -> ManagerFactory:
    name = backend_name(config)
    if name not in BACKENDS:
        raise BridgeError(f"unknown manager backend {name!r}; known: {', '.join(sorted(BACKENDS))}")

    def make(model: str, cfg: Config) -> Manager:
        factory: ManagerFactory = importlib.import_module(BACKENDS[name]).make
        return factory(model, cfg)

    return make


def configured_problem(config: Config) -> str | None:
    """What keeps the configured manager from working (no key, not logged in), or None.

    The one check `plan` and `doctor` share.
    """
    name = backend_name(config)
    if name not in BACKENDS:
        return f"unknown manager backend {name!r}; known: {', '.join(sorted(BACKENDS))}"
    check: Callable[[Config], str | None] = importlib.import_module(BACKENDS[name]).problem
    return check(config)
