import pytest
from units import convert


def test_metric_length() -> None:
    assert convert(1.5, "km", "m") == pytest.approx(1500)
    assert convert(25, "mm", "cm") == pytest.approx(2.5)


def test_imperial_length() -> None:
    assert convert(1, "mi", "ft") == pytest.approx(5280)
    assert convert(1, "in", "cm") == pytest.approx(2.54)
