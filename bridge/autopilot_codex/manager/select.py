"""Which manager backend a loop talks to: a registry, so a backend is one module and one line.

Nothing here imports a backend until a call is about to be made: hooks that never reach the
manager must not pay for `openai`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import BridgeError

if TYPE_CHECKING:
    from ..config import Config
    from . import Manager
    from .pricing import Price

# (model, config) -> a Manager. Tests pass their own; hooks and commands use `select(config)`.
ManagerFactory = Callable[[str, "Config"], "Manager"]

# backend name -> module defining `make(model, config) -> Manager`, `problem(config) -> str | None`,
# `price(model, config) -> Price`, `OVERHEAD_CHARS` (text the backend sends with every prompt)
# and `output_cap(asked) -> int` (the output tokens one call may really produce).
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


def price_of(config: Config, model: str) -> Price:
    """What the selected backend charges for `model`: its own price source (Codex prices
    the model its config names, and the dearest row when it cannot tell)."""
    backend = _backend(config)
    price: Callable[[str, Config], Price] = backend.price
    return price(model, config)


def worst_case_usd(config: Config, model: str, prompt: str, max_output_tokens: int) -> float:
    """The most one call to the selected backend could cost: the prompt plus the text the
    backend itself sends with it (`OVERHEAD_CHARS`), and the output it may really produce
    (`output_cap`: more than we ask for when the backend sends no cap of its own)."""
    from .pricing import BILLED_ATTEMPTS, Usage, cost_usd, estimate_tokens

    backend = _backend(config)
    # The backend's own text counts like ours, at the same deliberately high rate.
    tokens_in = estimate_tokens(prompt + " " * backend.OVERHEAD_CHARS)
    tokens_out: int = backend.output_cap(max_output_tokens)
    once = cost_usd(Usage(tokens_in, 0, tokens_out), price_of(config, model))
    return BILLED_ATTEMPTS * once


def _backend(config: Config) -> ModuleType:
    name = backend_name(config)
    if name not in BACKENDS:
        raise BridgeError(f"unknown manager backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    return importlib.import_module(BACKENDS[name])
