import pytest
from pager import page, page_count


@pytest.mark.parametrize(
    ("total", "per_page", "pages"),
    [(10, 3, 4), (9, 3, 3), (3, 3, 1), (1, 3, 1), (0, 3, 0), (12, 4, 3)],
)
def test_page_count(total: int, per_page: int, pages: int) -> None:
    assert page_count(total, per_page) == pages


def test_every_item_on_one_page() -> None:
    for total in range(0, 13):
        items = list(range(total))
        pages = [page(items, n, 4) for n in range(1, page_count(total, 4) + 1)]
        assert [x for p in pages for x in p] == items
        assert all(pages)


def test_no_page_past_the_end() -> None:
    with pytest.raises(IndexError):
        page(list(range(9)), 4, 3)
    with pytest.raises(IndexError):
        page([], 1, 3)
    with pytest.raises(IndexError):
        page([1], 0, 3)
