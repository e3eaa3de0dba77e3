import pytest
from stock import Inventory


def test_add_and_available() -> None:
    inventory = Inventory()
    inventory.add("A", 5)
    inventory.add("A", 2)
    assert inventory.available("A") == 7
    assert inventory.available("B") == 0


def test_add_refuses_nothing() -> None:
    with pytest.raises(ValueError):
        Inventory().add("A", 0)
