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


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def load(cls: type[T], data: object, where: str = "") -> T:
    """Build `cls` from parsed JSON, refusing unknown keys, missing keys and wrong types."""
    if not isinstance(data, dict):
        raise Invalid(where, "expected an object")
    hints = _hints(typing.cast(Any, cls))
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = {f.name for f in fields}
    unknown = sorted(k for k in data if k not in names)
    if unknown:
        raise Invalid(_join(where, str(unknown[0])), "unknown field")
    values: dict[str, Any] = {}
    for f in fields:
        if f.name in data:
            values[f.name] = _convert(hints[f.name], data[f.name], _join(where, f.name))
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise Invalid(_join(where, f.name), "missing")
    return cls(**values)


def dump(value: object) -> Any:
    """The JSON-ready form of a dataclass tree."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: dump(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [dump(v) for v in value]
    return value


def _convert(kind: Any, value: object, where: str) -> Any:  # noqa: C901 - one branch per kind
    origin = get_origin(kind)
    if kind is Any:
        return value
    if origin in (Union, types.UnionType):
        options = get_args(kind)
        if value is None and type(None) in options:
            return None
        problems = []
        for option in (o for o in options if o is not type(None)):
            try:
                return _convert(option, value, where)
            except Invalid as exc:
                problems.append(exc.problem)
        raise Invalid(where, " or ".join(problems))
    if origin is Literal:
        if value in get_args(kind):
            return value
        raise Invalid(where, f"expected one of {', '.join(map(repr, get_args(kind)))}")
    if origin is list:
        if not isinstance(value, list):
            raise Invalid(where, "expected a list")
        (item,) = get_args(kind)
        return [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise Invalid(where, "expected true or false")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise Invalid(where, "expected an integer")
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise Invalid(where, "expected a number")
    if kind is str:
        if isinstance(value, str):
            return value
        raise Invalid(where, "expected a string")
    if dataclasses.is_dataclass(kind):
        return load(kind, value, where)  # type: ignore[arg-type]
    raise TypeError(f"unsupported field type {kind!r} at {where}")


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
