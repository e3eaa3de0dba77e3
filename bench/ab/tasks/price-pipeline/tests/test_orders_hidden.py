from decimal import Decimal

import pytest
from orders import Line, discounted, parse_line, subtotal, total


@pytest.mark.parametrize("text", ["A-1,0,2.50", "A-1,3", "A-1,x,1", "A-1,2,abc"])
def test_bad_lines(text: str) -> None:
    with pytest.raises(ValueError):
        parse_line(text)


def test_subtotal() -> None:
    lines = [Line("A", 3, Decimal("2.50")), Line("B", 1, Decimal("0.99"))]
    assert subtotal(lines) == Decimal("8.49")


def test_coupons() -> None:
    assert discounted(Decimal("20"), "SAVE10") == Decimal("18")
    assert discounted(Decimal("3"), "FLAT5") == Decimal("0")
    assert discounted(Decimal("3"), None) == Decimal("3")
    with pytest.raises(ValueError):
        discounted(Decimal("3"), "FREE")


def test_coupon_before_tax_rounded_last() -> None:
    lines = [parse_line("A,1,10.05")]
    # 10.05 - 10 % = 9.045; taxed 20 % = 10.854 -> 10.85
    assert total(lines, "SAVE10", Decimal("0.2")) == Decimal("10.85")
    # 10.05 - 5 = 5.05; taxed 10 % = 5.555 -> 5.56 (half up)
    assert total(lines, "FLAT5", Decimal("0.1")) == Decimal("5.56")
    assert total(lines, None, Decimal("0")) == Decimal("10.05")
