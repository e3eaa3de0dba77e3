from datetime import date

import pytest
from dates import parse_date

TODAY = date(2024, 6, 15)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("01/05/2024", date(2024, 5, 1)),
        ("1/5/2024", date(2024, 5, 1)),
        ("31/12/2023", date(2023, 12, 31)),
        ("20240501", date(2024, 5, 1)),
        ("May 1, 2024", date(2024, 5, 1)),
        ("sep 9 2024", date(2024, 9, 9)),
        ("SEPTEMBER 9, 2024", date(2024, 9, 9)),
        ("1 May 2024", date(2024, 5, 1)),
        ("9 Sep 2024", date(2024, 9, 9)),
        ("29 February 2024", date(2024, 2, 29)),
        ("today", TODAY),
        (" Yesterday ", date(2024, 6, 14)),
        ("tomorrow", date(2024, 6, 16)),
    ],
)
def test_forms(text: str, expected: date) -> None:
    assert parse_date(text, TODAY) == expected


@pytest.mark.parametrize(
    "text", ["", "2024-02-30", "32/01/2024", "2024/05/01", "Mai 1, 2024", "9 sept 2024", "next week",
             "20241301", "May 1"],
)
def test_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_date(text, TODAY)
