from intervals import merge


def test_overlapping() -> None:
    assert merge([(1, 4), (2, 6), (8, 9)]) == [(1, 6), (8, 9)]


def test_touching() -> None:
    assert merge([(1, 3), (3, 5)]) == [(1, 5)]
