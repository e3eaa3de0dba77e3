"""A small result cache for pure functions."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class Memoized:
    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.cache: dict[Any, Any] = {}
        self.calls = 0
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = (args, tuple(kwargs.items()))
        if key not in self.cache:
            self.calls += 1
            self.cache[key] = self.func(*args, **kwargs)
        return self.cache[key]


def memoize(func: Callable[..., Any]) -> Memoized:
    return Memoized(func)
