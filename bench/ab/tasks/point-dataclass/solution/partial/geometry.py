"""Points in the plane."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Point:
    x: float
    y: float

    def norm(self) -> float:
        return math.hypot(self.x, self.y)


def distance(a: Point, b: Point) -> float:
    return math.hypot(a.x - b.x, a.y - b.y)


def nearest(points: Iterable[Point], to: Point) -> Point:
    return min(points, key=lambda p: (distance(p, to), p.x, p.y))
