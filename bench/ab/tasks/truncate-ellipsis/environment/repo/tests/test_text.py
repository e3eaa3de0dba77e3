import pytest
from text import truncate, truncate_all


def test_short_titles_unchanged() -> None:
    assert truncate("Milk", 10) == "Milk"
    assert truncate("", 3) == ""


def test_long_titles_end_with_an_ellipsis() -> None:
    cut = truncate("A rather long title", 8)
    assert cut.endswith("…")
    assert "A rather long title".startswith(cut[:-1])


def test_bad_limit_and_all() -> None:
    with pytest.raises(ValueError):
        truncate("x", 0)
    assert truncate_all(["a", "b"], 5) == ["a", "b"]
