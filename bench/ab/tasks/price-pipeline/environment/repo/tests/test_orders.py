from decimal import Decimal

from orders import Line, parse_line


def test_parse_line() -> None:
    assert parse_line(" A-1, 3 ,2.50 ") == Line("A-1", 3, Decimal("2.50"))
