import pytest
from logparse import parse_access, parse_error, parse_fields


@pytest.mark.parametrize("line", ["", "   ", "# rotated at 00:00", "  # indented comment\n"])
def test_blank_and_comment_lines(line: str) -> None:
    assert parse_access(line) is None
    assert parse_error(line) is None


def test_level_upper_cased_and_message_kept_whole() -> None:
    assert parse_error("  t1 warn  two  spaces \n") == {
        "time": "t1",
        "level": "WARN",
        "message": " two  spaces",
    }


def test_status_takes_the_rest() -> None:
    assert parse_access("t GET /a 404 not found")["status"] == "404 not found"


def test_errors_name_the_kind() -> None:
    with pytest.raises(ValueError, match="access line needs 4 fields: 't GET /a'"):
        parse_access("t GET /a")
    with pytest.raises(ValueError, match="error line needs 3 fields: 't ERROR'"):
        parse_error("t ERROR")


def test_parse_fields() -> None:
    assert parse_fields("a b c d", ["x", "y", "z"], "test") == {"x": "a", "y": "b", "z": "c d"}
    assert parse_fields("# note", ["x"], "test") is None
    with pytest.raises(ValueError, match="test line needs 2 fields"):
        parse_fields("a", ["x", "y"], "test")
