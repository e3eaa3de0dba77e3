"""Points in the plane."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


class Point:
    __slots__ = ("x", "y")

    x: float
    y: float

    def __init__(self, x: float, y: float) -> None:
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Point is immutable: cannot set {name}")

    def __repr__(self) -> str:
        return f"Point(x={self.x!r}, y={self.y!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Point):
            return NotImplemented
        return (self.x, self.y) == (other.x, other.y)

    def __hash__(self) -> int:
        return hash((self.x, self.y))

    def __lt__(self, other: Point) -> bool:
        # Points order by their distance from the origin; ties by x, then y.
        return (self.norm(), self.x, self.y) < (other.norm(), other.x, other.y)

    def __le__(self, other: Point) -> bool:
        return self == other or self < other

    def norm(self) -> float:
        return math.hypot(self.x, self.y)


def distance(a: Point, b: Point) -> float:
    return math.hypot(a.x - b.x, a.y - b.y)


def nearest(points: Iterable[Point], to: Point) -> Point:
    return min(points, key=lambda p: (distance(p, to), p.x, p.y))
