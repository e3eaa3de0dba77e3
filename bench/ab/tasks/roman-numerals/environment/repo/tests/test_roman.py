import pytest
from roman import to_roman


@pytest.mark.parametrize(
    ("n", "text"), [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (1994, "MCMXCIV"), (3999, "MMMCMXCIX")]
)
def test_to_roman(n: int, text: str) -> None:
    assert to_roman(n) == text
