"""Loop styles: autopilot (the manager loop), and the siblings that reuse its guards and store.

A style answers the hooks of a loop of its kind, names the record it keeps beside the envelope,
and answers the views and verbs that differ by style (`status`, `resume`, `cancel`). Adding one
is adding a package whose module fits `Style` and its line in `STYLES` (mypy checks the module
against `Style`); nothing else names a style. The active marker names each loop's style, so the
hook path imports only the style it needs. Importing this registry registers every style's
record (`state.RECORDS`): the CLI and the hooks import it before they read a loop's state.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from importlib import import_module
from typing import TYPE_CHECKING, Protocol, cast

from ..registry import Registry
from . import rounds as _rounds_style  # noqa: F401 - registers the rounds record
from .autopilot import record as _autopilot_record  # noqa: F401 - registers the autopilot record
from .ralph import record as _ralph_record  # noqa: F401 - registers the ralph record

if TYPE_CHECKING:
    from ..hookio import Answer
    from ..state import State
    from ..store import Store
    from .context import HookContext, selected_manager

__all__ = ["STYLES", "a_loop", "Handler", "HookContext", "Style", "get", "of", "selected_manager"]

Handler = Callable[["HookContext"], "Answer"]


def __getattr__(name: str) -> object:
    """`HookContext` and `selected_manager`, imported when first asked for: the registry stays
    light, since every hook imports it for its loop's record."""
    if name in ("HookContext", "selected_manager"):
        from . import context

        return getattr(context, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Style(Protocol):
    """A style's module: its hooks, its record, and its parts of the views and verbs."""

    # The command line that starts a new loop of this style (`plan <goal>`), the verb that
    # takes a stopped one on again (`resume`: resume's own) and the verb the user ends one with.
    STARTED_BY: str
    RESUMED_BY: str
    ENDED_BY: str

    def handle(self, ctx: HookContext) -> Answer: ...

    def status_text(self, state: State, store: Store, entry: Callable[[str], str]) -> str:
        """What `status` shows of a loop of this style; `entry` says how the reader runs a
        verb (`commands.entry`)."""

    def cancel(self, store: Store, state: State) -> str | None:
        """End the running loop for `cancel` (under the store's lock) and say so; None when
        this style's loops are not cancelled but stopped."""


def _member(module: str) -> Callable[[], Style]:
    """A style's loader: its module, imported when first asked for. Bound to `import_module`
    itself, so a hook's way to its style passes no frame of this registry; mypy checks each
    module against `Style` in the registries' test."""
    return cast("Callable[[], Style]", partial(import_module, f"{__package__}.{module}"))


STYLES: Registry[Style] = Registry(
    "loop style",
    {
        "autopilot": _member("autopilot.style"),
        "ralph": _member("ralph.handlers"),
        "rounds": _member("rounds"),
    },
)


def get(name: str) -> Handler:
    return STYLES.get(name).handle


def a_loop(style: str) -> str:
    """ "an autopilot loop", "a ralph loop": the article the style's name takes."""
    return f"{'an' if style[:1] in ('a', 'e', 'i', 'o', 'u') else 'a'} {style} loop"


def of(state: State) -> Style:
    return STYLES.get(state.style)
