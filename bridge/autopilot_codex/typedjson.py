"""Strict JSON <-> frozen dataclasses, with the standard library only.

Hooks run on every tool call, and importing pydantic alone costs several times the
interpreter's own start-up; the persisted state is therefore plain dataclasses, validated here
as strictly as a pydantic model with `extra="forbid"` would be. pydantic stays at the manager
boundary, where a network call dwarfs its import.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


class Invalid(ValueError):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"invalid at {where or 'top level'}: {problem}")
        self.where = where or "top level"
        self.problem = problem

    def inside(self, part: str) -> Invalid:
        """The same problem, one level further out (paths are built only when one fails)."""
        where = part if self.where == "top level" else _join(part, self.where)
        return Invalid(where, self.problem)


@cache
def _spec(cls: Any) -> tuple[tuple[tuple[str, Any, bool], ...], frozenset[str]]:
    hints = typing.get_type_hints(cls)
    fields = tuple(
        (
            f.name,
            hints[f.name],
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    )
    return fields, frozenset(name for name, _, _ in fields)


@cache
def _names(cls: Any) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def load(cls: type[T], data: object, where: str = "") -> T:
    """Build `cls` from parsed JSON, refusing unknown keys, missing keys and wrong types."""
    try:
        return typing.cast(T, _load(cls, data))
    except Invalid as exc:
        raise exc.inside(where) if where else exc from None


def _load(cls: Any, data: object) -> Any:
    if not isinstance(data, dict):
        raise Invalid("", "expected an object")
    fields, names = _spec(cls)
    for key in data:
        if key not in names:
            raise Invalid(str(key), "unknown field")
    values: dict[str, Any] = {}
    for name, kind, required in fields:
        if name in data:
            try:
                values[name] = _convert(kind, data[name])
            except Invalid as exc:
                raise exc.inside(name) from None
        elif required:
            raise Invalid(name, "missing")
    return cls(**values)


def dump(value: object) -> Any:
    """The JSON-ready form of a dataclass tree."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, list | tuple):
        return [dump(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: dump(getattr(value, name)) for name in _names(type(value))}
    return value


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _convert(kind: Any, value: object) -> Any:  # noqa: C901 - one branch per kind
    if kind is str:
        if isinstance(value, str):
            return value
        raise Invalid("", "expected a string")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise Invalid("", "expected an integer")
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise Invalid("", "expected true or false")
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:  # an int past any float: a number, but not one we can use
                raise Invalid("", "a number too large") from None
        raise Invalid("", "expected a number")
    if kind is Any:
        return value
    origin = get_origin(kind)
    if origin is list:
        if not isinstance(value, list):
            raise Invalid("", "expected a list")
        (item,) = get_args(kind)
        out = []
        for i, v in enumerate(value):
            try:
                out.append(_convert(item, v))
            except Invalid as exc:
                raise exc.inside(f"[{i}]") from None
        return out
    if origin in (Union, types.UnionType):
        options = get_args(kind)
        if value is None and type(None) in options:
            return None
        problems = []
        for option in (o for o in options if o is not type(None)):
            try:
                return _convert(option, value)
            except Invalid as exc:
                if exc.where != "top level":
                    raise
                problems.append(exc.problem)
        raise Invalid("", " or ".join(problems))
    if origin is Literal:
        if value in get_args(kind):
            return value
        raise Invalid("", f"expected one of {', '.join(map(repr, get_args(kind)))}")
    if dataclasses.is_dataclass(kind):
        return _load(kind, value)
    raise TypeError(f"unsupported field type {kind!r}")


def _join(where: str, name: str) -> str:
    if not where:
        return name
    return f"{where}{name}" if name.startswith("[") else f"{where}.{name}"
