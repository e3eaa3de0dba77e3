from decimal import Decimal

from invoice import format_eur, invoice_total, line_total


def test_line_total() -> None:
    assert line_total(3, "0.333") == Decimal("1.00")
    assert line_total(2, "1.10") == Decimal("2.20")


def test_invoice_total_sums_rounded_lines() -> None:
    assert invoice_total([(3, "0.333"), (1, "0.994")]) == Decimal("1.99")


def test_format() -> None:
    assert format_eur(Decimal("1234.5")) == "1,234.50 EUR"
