import itertools

import pricing
import pytest
from shop import checkout


def original(cart: list[dict[str, int]], region: str, member: bool) -> dict[str, int]:
    """The checkout as it was before the refactor."""
    subtotal = sum(item["price"] * item["qty"] for item in cart)
    discount = subtotal * 5 // 100 if member else 0
    if subtotal >= 10000:
        discount += 1000
    rate = {"DE": 19, "FR": 20, "US": 0}[region]
    taxable = subtotal - discount
    return {
        "subtotal": subtotal,
        "discount": discount,
        "tax": taxable * rate // 100,
        "total": taxable + taxable * rate // 100,
    }


PRICES = [0, 1, 99, 1999, 3333, 9999, 10000, 10001, 12345]


@pytest.mark.parametrize(
    ("price", "region", "member"), list(itertools.product(PRICES, ["DE", "FR", "US"], [False, True]))
)
def test_same_results_as_before(price: int, region: str, member: bool) -> None:
    cart = [{"sku": "A", "price": price, "qty": 1}, {"sku": "B", "price": 7, "qty": 3}]
    assert checkout(cart, region, member) == original(cart, region, member)


def test_empty_cart_and_unknown_region() -> None:
    assert checkout([], "FR", member=True)["total"] == 0
    with pytest.raises(KeyError, match="unknown region XX"):
        checkout([], "XX", member=False)


def test_the_new_module() -> None:
    assert pricing.subtotal([{"sku": "A", "price": 250, "qty": 4}]) == 1000
    assert pricing.discount(10000, member=True) == 1500
    assert pricing.discount(9999, member=False) == 0
    assert pricing.tax(1999, "DE") == 379
    with pytest.raises(KeyError):
        pricing.tax(1, "XX")
