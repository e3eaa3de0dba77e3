import pytest
from stock import Inventory, OutOfStock


def stocked() -> Inventory:
    inventory = Inventory()
    inventory.add("A", 5)
    inventory.add("B", 1)
    return inventory


def test_reserve_is_all_or_nothing() -> None:
    inventory = stocked()
    with pytest.raises(OutOfStock, match="B"):
        inventory.reserve("o1", [("A", 2), ("B", 2)])
    assert (inventory.available("A"), inventory.available("B")) == (5, 1)
    assert issubclass(OutOfStock, ValueError)


def test_reserve_then_release() -> None:
    inventory = stocked()
    inventory.reserve("o1", [("A", 2), ("B", 1)])
    assert (inventory.available("A"), inventory.on_hand("A")) == (3, 5)
    inventory.release("o1")
    assert (inventory.available("A"), inventory.available("B")) == (5, 1)


def test_reserve_then_commit() -> None:
    inventory = stocked()
    inventory.reserve("o1", [("A", 2)])
    inventory.commit("o1")
    assert (inventory.available("A"), inventory.on_hand("A")) == (3, 3)


def test_an_order_ends_once() -> None:
    inventory = stocked()
    inventory.reserve("o1", [("A", 1)])
    with pytest.raises(ValueError):
        inventory.reserve("o1", [("A", 1)])
    inventory.commit("o1")
    with pytest.raises(KeyError):
        inventory.release("o1")
    with pytest.raises(KeyError):
        inventory.commit("o1")
    with pytest.raises(KeyError):
        inventory.release("nope")


def test_two_orders_compete() -> None:
    inventory = stocked()
    inventory.reserve("o1", [("A", 4)])
    with pytest.raises(OutOfStock):
        inventory.reserve("o2", [("A", 2)])
    inventory.release("o1")
    inventory.reserve("o2", [("A", 2)])
    assert inventory.available("A") == 3
