from datetime import date

from dates import parse_date

TODAY = date(2024, 6, 15)


def test_iso() -> None:
    assert parse_date("2024-05-01", TODAY) == date(2024, 5, 1)
    assert parse_date("  1999-12-31 ", TODAY) == date(1999, 12, 31)
