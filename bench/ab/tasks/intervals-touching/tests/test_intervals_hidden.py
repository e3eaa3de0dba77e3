import pytest
from intervals import merge


@pytest.mark.parametrize(
    ("given", "merged"),
    [
        ([], []),
        ([(5, 6), (1, 2)], [(1, 2), (5, 6)]),
        ([(4, 5), (1, 4)], [(1, 5)]),
        ([(1, 10), (2, 3)], [(1, 10)]),
        ([(1, 10), (2, 3), (9, 12)], [(1, 12)]),
        ([(3, 3), (1, 2)], [(1, 2), (3, 3)]),
        ([(6, 8), (1, 3), (2, 4), (4, 5)], [(1, 5), (6, 8)]),
    ],
)
def test_merge(given: list[tuple[int, int]], merged: list[tuple[int, int]]) -> None:
    assert merge(given) == merged


def test_input_not_changed() -> None:
    given = [(5, 6), (1, 2)]
    merge(given)
    assert given == [(5, 6), (1, 2)]
