import pytest
from units import convert


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (1, "kg", "lb", 2.2046226218),
        (16, "oz", "lb", 1),
        (500, "g", "kg", 0.5),
        (1, "gal", "l", 3.785411784),
        (250, "ml", "l", 0.25),
        (100, "C", "F", 212),
        (32, "F", "C", 0),
        (0, "K", "C", -273.15),
        (-40, "F", "C", -40),
        (300, "K", "F", 80.33),
        (3, "m", "m", 3),
        (5, "K", "K", 5),
    ],
)
def test_conversions(value: float, source: str, target: str, expected: float) -> None:
    assert convert(value, source, target) == pytest.approx(expected, abs=1e-6, rel=1e-6)


@pytest.mark.parametrize(
    ("value", "source", "target"),
    [(1, "kg", "m"), (1, "C", "l"), (1, "parsec", "m"), (1, "m", "yards"), (-1, "K", "C"),
     (-300, "C", "K"), (-500, "F", "C")],
)
def test_refused(value: float, source: str, target: str) -> None:
    with pytest.raises(ValueError):
        convert(value, source, target)
