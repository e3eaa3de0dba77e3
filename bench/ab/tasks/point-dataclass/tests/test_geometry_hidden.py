import dataclasses

import pytest
from geometry import Point


def test_is_a_dataclass() -> None:
    assert dataclasses.is_dataclass(Point)
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y"]


def test_orders_by_distance_from_the_origin() -> None:
    points = [Point(3, 0), Point(0, 1), Point(-2, 0), Point(1, 0)]
    assert sorted(points) == [Point(0, 1), Point(1, 0), Point(-2, 0), Point(3, 0)]
    assert Point(0, 5) > Point(4, 0)
    assert Point(1, 0) <= Point(1, 0)
    assert Point(0, 1) < Point(1, 0)


def test_immutable() -> None:
    point = Point(1, 2)
    with pytest.raises(AttributeError):
        point.x = 5
    assert point == Point(1, 2)


def test_equality_with_other_types() -> None:
    assert Point(1, 2) != (1, 2)
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert Point(1, 2) != Point(2, 1)
