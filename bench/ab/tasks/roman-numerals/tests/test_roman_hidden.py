import pytest
from roman import from_roman, to_roman


@pytest.mark.parametrize("n", [0, -1, 4000, True])
def test_to_roman_refuses(n: int) -> None:
    with pytest.raises(ValueError):
        to_roman(n)


def test_round_trip() -> None:
    for n in range(1, 4000):
        assert from_roman(to_roman(n)) == n


def test_lower_case() -> None:
    assert from_roman("mcmxciv") == 1994


@pytest.mark.parametrize("text", ["", "IIII", "VX", "IC", "MMMM", "ABC", "XM", "VV", "IIV"])
def test_from_roman_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        from_roman(text)
