from pathlib import Path

from records import parse_file, parse_line


def test_plain_line() -> None:
    assert parse_line("a,b,c") == ["a", "b", "c"]


def test_quoted_comma() -> None:
    assert parse_line('a,"b,c",d') == ["a", "b,c", "d"]


def test_file_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("x,y\n\n1,2\n")
    assert parse_file(path) == [["x", "y"], ["1", "2"]]
