import warnings
from pathlib import Path

import directory
import pytest
import report


@pytest.mark.parametrize("query", ["ann lee", "  Ann   Lee ", "ANN LEE", "Ann\tLee"])
def test_find_user_forgives_case_and_spaces(query: str) -> None:
    assert directory.find_user(query) == {"name": "Ann Lee", "team": "billing"}


def test_misses() -> None:
    assert directory.find_user("Ann") is None
    assert directory.find_user("") is None
    assert report.describe("Zed") == "Zed: not in the directory"


def test_old_name_still_works_and_warns() -> None:
    with pytest.warns(DeprecationWarning, match="find_user"):
        found = directory.get_user_by_name(" bob stone ")
    assert found == {"name": "Bob Stone", "team": "search"}


def test_new_name_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert report.describe("cy young") == "Cy Young (billing)"


def test_the_old_name_is_gone_from_the_repo() -> None:
    source = Path(report.__file__).read_text()
    assert "get_user_by_name" not in source
