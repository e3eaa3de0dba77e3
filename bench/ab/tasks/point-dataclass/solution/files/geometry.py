"""Points in the plane."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass


# Not order=True: that would order by (x, y); points order by their distance from the origin.
@functools.total_ordering
@dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float

    def __lt__(self, other: Point) -> bool:
        # Ties by x, then y.
        return (self.norm(), self.x, self.y) < (other.norm(), other.x, other.y)

    def norm(self) -> float:
        return math.hypot(self.x, self.y)


def distance(a: Point, b: Point) -> float:
    return math.hypot(a.x - b.x, a.y - b.y)


def nearest(points: Iterable[Point], to: Point) -> Point:
    return min(points, key=lambda p: (distance(p, to), p.x, p.y))
