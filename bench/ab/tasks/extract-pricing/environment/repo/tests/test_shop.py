from shop import checkout


def test_checkout() -> None:
    cart = [{"sku": "A", "price": 1000, "qty": 2}]
    assert checkout(cart, "DE", member=False) == {
        "subtotal": 2000,
        "discount": 0,
        "tax": 380,
        "total": 2380,
    }


def test_member_discount() -> None:
    cart = [{"sku": "A", "price": 2000, "qty": 1}]
    assert checkout(cart, "US", member=True)["total"] == 1900
