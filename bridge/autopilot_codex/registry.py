"""A typed registry of lazily imported members: hosts, loop styles, manager backends.

Each member is registered once, as a small loader function that imports its module and
returns it (or the object it defines). The loader's return type is the kind's `Protocol`, so
`mypy --strict` checks every member against it (a module is checked structurally as well as
an object); importing only in the loader keeps a hook from paying for members it never uses
(the OpenAI SDK, the other styles). Everything derived from the names (the CLI's choices, the
settings check, the messages) reads them from here, so there is no second list.

Standard library only: the hook path imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from importlib import import_module
from typing import Any, Generic, Protocol, TypeVar

from .errors import BridgeError

T = TypeVar("T")
R = TypeVar("R")


class _Event(Protocol):
    @property
    def event(self) -> str: ...


class _Hook(Protocol):
    @property
    def payload(self) -> _Event: ...


H = TypeVar("H", bound=_Hook)


class Registry(Generic[T]):
    """Names, in registration order, each with the loader of its member."""

    def __init__(self, kind: str, loaders: Mapping[str, Callable[[], T]]) -> None:
        self.kind = kind
        self._loaders = dict(loaders)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._loaders)

    def __contains__(self, name: object) -> bool:
        return name in self._loaders

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def unknown(self, name: str) -> str:
        """The one message for a name that is not registered."""
        return f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self._loaders))}"

    def with_member(self, name: str, load: Callable[[], T]) -> Registry[T]:
        """A copy with one more member: how a test registers a fake host or backend."""
        return Registry(self.kind, {**self._loaders, name: load})

    def get(self, name: str) -> T:
        """The member, imported now; a BridgeError naming the known ones for an unknown name."""
        load = self._loaders.get(name)
        if load is None:
            raise BridgeError(self.unknown(name))
        return load()


def member(module: str, attribute: str) -> Callable[[], Any]:
    """The loader of a member that is one object of its module (a host's `HOST`): imported
    when first asked for, with no frame of the registering package's own, so looking a member
    up is a table's lookup, not a call into the wing it names."""
    return partial(_member, module, attribute)


def _member(module: str, attribute: str) -> Any:
    return getattr(import_module(module), attribute)


class ByEvent(Generic[H, R]):
    """A style's hooks as a table: the handler of the hook's event, else `rest`. The hook's
    way from the entrance to its handler is then a lookup, with no frame of a dispatching
    module between them (the Stop reaches the module that judges it in one hop)."""

    def __init__(self, table: Mapping[str, Callable[[H], R]], rest: Callable[[H], R]) -> None:
        self.table = dict(table)
        self.rest = rest

    def __call__(self, ctx: H) -> R:
        return self.table.get(ctx.payload.event, self.rest)(ctx)
