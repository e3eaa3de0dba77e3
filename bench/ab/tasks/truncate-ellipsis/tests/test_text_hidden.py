from text import truncate, truncate_all


def test_the_limit_counts_the_ellipsis() -> None:
    assert truncate("abcdefghij", 5) == "abcd…"
    assert truncate("abcdef", 6) == "abcdef"
    assert truncate("abcdefg", 6) == "abcde…"
    assert truncate("abcdef", 1) == "…"


def test_spaces_before_the_ellipsis_go() -> None:
    assert truncate("A rather long title", 10) == "A rather…"


def test_never_longer_than_the_limit() -> None:
    titles = ["x" * n for n in range(0, 30)]
    for limit in range(1, 25):
        assert all(len(t) <= limit for t in truncate_all(titles, limit))
