from decimal import Decimal

from invoice import format_eur, invoice_total, line_total


def test_halves_round_up() -> None:
    assert line_total(1, "0.125") == Decimal("0.13")
    assert line_total(5, "0.005") == Decimal("0.03")
    assert line_total(1, "2.345") == Decimal("2.35")


def test_total_of_halves() -> None:
    assert invoice_total([(1, "0.125"), (1, "0.625")]) == Decimal("0.76")


def test_other_amounts() -> None:
    assert line_total(4, "0.111") == Decimal("0.44")
    assert format_eur(Decimal("0")) == "0.00 EUR"
    assert format_eur(Decimal("1000000")) == "1,000,000.00 EUR"
