from pager import page, page_count


def test_last_partial_page() -> None:
    items = list(range(10))
    assert page_count(10, 3) == 4
    assert page(items, 4, 3) == [9]


def test_first_page() -> None:
    assert page(list("abcdef"), 1, 4) == ["a", "b", "c", "d"]
