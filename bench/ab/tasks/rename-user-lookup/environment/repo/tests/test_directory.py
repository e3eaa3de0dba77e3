from directory import get_user_by_name
from report import describe


def test_lookup() -> None:
    assert get_user_by_name("Bob Stone") == {"name": "Bob Stone", "team": "search"}


def test_describe() -> None:
    assert describe("Ann Lee") == "Ann Lee (billing)"
