from pathlib import Path

import pytest
from records import parse_file, parse_line


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        ('"say ""hi""",x', ['say "hi"', "x"]),
        ('a,"",b', ["a", "", "b"]),
        ("a,,b", ["a", "", "b"]),
        ("a,", ["a", ""]),
        ('"x, ""y"", z"', ['x, "y", z']),
        ("1,2\r\n", ["1", "2"]),
    ],
)
def test_lines(line: str, fields: list[str]) -> None:
    assert parse_line(line) == fields


def test_file(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text('name,quote\n\nann,"she said ""no, thanks"""\n')
    assert parse_file(path) == [["name", "quote"], ["ann", 'she said "no, thanks"']]
