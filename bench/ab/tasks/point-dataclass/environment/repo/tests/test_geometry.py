from geometry import Point, distance, nearest


def test_value_semantics() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    assert len({Point(1, 2), Point(1, 2)}) == 1


def test_distance_and_nearest() -> None:
    assert distance(Point(0, 0), Point(3, 4)) == 5
    assert nearest([Point(5, 5), Point(1, 1)], Point(0, 0)) == Point(1, 1)
