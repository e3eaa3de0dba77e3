"""Loop styles: autopilot (the manager loop), and the siblings that reuse its guards and store.

A style answers the hooks of a loop of its kind. Adding one is adding a module with a `handle`
function and its line in `STYLES` (mypy checks the module against `Style`); the active marker
names each loop's style, so the hook path imports only the style it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..registry import Registry
from .context import HookContext, selected_manager

if TYPE_CHECKING:
    from ..hookio import Answer

__all__ = ["STYLES", "Handler", "HookContext", "Style", "get", "selected_manager"]

Handler = Callable[[HookContext], "Answer"]


class Style(Protocol):
    """A style's module: one function answers every hook of a loop of this style."""

    def handle(self, ctx: HookContext) -> Answer: ...


def _autopilot() -> Style:
    from .autopilot import handlers

    return handlers


def _ralph() -> Style:
    from .ralph import handlers

    return handlers


def _rounds() -> Style:
    from . import rounds

    return rounds


STYLES: Registry[Style] = Registry(
    "loop style", {"autopilot": _autopilot, "ralph": _ralph, "rounds": _rounds}
)


def get(name: str) -> Handler:
    return STYLES.get(name).handle
