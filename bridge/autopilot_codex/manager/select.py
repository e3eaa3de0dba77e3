"""Which manager backend a loop talks to: a typed registry (a backend is a module and a line).

Nothing here imports a backend until a call is about to be made: hooks that never reach the
manager must not pay for `openai`.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Protocol, cast

from ..config import MANAGERS
from ..errors import BridgeError
from ..registry import Registry

if TYPE_CHECKING:
    from ..config import Config
    from . import Manager
    from .pricing import Price

# (model, config) -> a Manager. Tests pass their own; hooks and commands use `select(config)`.
ManagerFactory = Callable[[str, "Config"], "Manager"]


class Backend(Protocol):
    """What a backend module defines; mypy checks each registered module against it."""

    # Characters of text the backend sends with every prompt (its own instructions).
    OVERHEAD_CHARS: int

    def make(self, model: str, config: Config) -> Manager: ...

    def problem(self, config: Config) -> str | None:
        """What keeps this backend from working here (no key, not logged in), or None."""

    def price(self, model: str, config: Config) -> Price: ...

    def output_cap(self, asked: int) -> int:
        """The output tokens one call may really produce when `asked` are asked for."""


def _loader(name: str) -> Callable[[], Backend]:
    def load() -> Backend:
        # mypy checks each module against `Backend` in the registries' test.
        return cast("Backend", import_module(f"{__package__}.{name}_backend"))

    return load


BACKENDS: Registry[Backend] = Registry("manager backend", {n: _loader(n) for n in MANAGERS})


def backend_name(config: Config) -> str:
    """The configured backend; with none configured, `openai` when a key is set, else `codex`
    when it is installed and logged in, else `openai` (whose problem names the missing key)."""
    if config.manager:
        return config.manager
    from ..credentials import has_key

    if has_key() or "codex" not in BACKENDS:
        return "openai"
    return "openai" if BACKENDS.get("codex").problem(config) else "codex"


def select(config: Config) -> ManagerFactory:
    name = backend_name(config)
    if name not in BACKENDS:
        raise BridgeError(BACKENDS.unknown(name))

    return lambda model, cfg: BACKENDS.get(name).make(model, cfg)


def selected(model: str, config: Config) -> Manager:
    """The configured backend's manager: the factory hooks and commands use unless a test
    passes its own."""
    return select(config)(model, config)


def configured_problem(config: Config) -> str | None:
    """What keeps the configured manager from working (no key, not logged in), or None.

    The one check `plan` and `doctor` share.
    """
    name = backend_name(config)
    if name not in BACKENDS:
        return BACKENDS.unknown(name)
    return BACKENDS.get(name).problem(config)


def price_of(config: Config, model: str) -> Price:
    """What the selected backend charges for `model`: its own price source (Codex prices
    the model its config names, and the dearest row when it cannot tell)."""
    return _backend(config).price(model, config)


def worst_case_usd(config: Config, model: str, prompt: str, max_output_tokens: int) -> float:
    """The most one call to the selected backend could cost: the prompt plus the text the
    backend itself sends with it (`OVERHEAD_CHARS`), and the output it may really produce
    (`output_cap`: more than we ask for when the backend sends no cap of its own)."""
    from .pricing import ceiling_usd

    backend = _backend(config)
    # The backend's own text counts like ours, at the same deliberately high rate.
    text = prompt + " " * backend.OVERHEAD_CHARS
    return ceiling_usd(text, backend.output_cap(max_output_tokens), price_of(config, model))


def _backend(config: Config) -> Backend:
    return BACKENDS.get(backend_name(config))
