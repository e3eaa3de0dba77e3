from pathlib import Path

import pytest
import sizes
import utils
import values
import words


@pytest.mark.parametrize(
    ("size", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
     (1048575, "1024.0 KiB"), (1048576, "1.0 MiB"), (5 * 1024**5, "5120.0 TiB")],
)
def test_human_size(size: int, text: str) -> None:
    assert sizes.human_size(size) == text
    assert utils.human_size(size) == text


def test_human_size_refuses_negative() -> None:
    with pytest.raises(ValueError):
        sizes.human_size(-1)


@pytest.mark.parametrize(
    ("count", "word", "text"),
    [(1, "box", "1 box"), (0, "box", "0 boxes"), (3, "match", "3 matches"), (2, "city", "2 cities"),
     (2, "day", "2 days"), (2, "bus", "2 buses"), (5, "file", "5 files")],
)
def test_plural(count: int, word: str, text: str) -> None:
    assert words.plural(count, word) == text


@pytest.mark.parametrize(("text", "value"), [(" Yes ", True), ("ON", True), ("0", False), ("off", False)])
def test_parse_bool(text: str, value: bool) -> None:
    assert values.parse_bool(text) is value


@pytest.mark.parametrize("text", ["", "maybe", "2", "y"])
def test_parse_bool_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        values.parse_bool(text)


def test_clamp() -> None:
    assert values.clamp(-1, 0, 3) == 0
    assert values.clamp(2, 2, 2) == 2
    with pytest.raises(ValueError):
        values.clamp(1, 3, 0)


def test_utils_only_re_exports() -> None:
    assert utils.parse_bool is values.parse_bool
    assert utils.plural is words.plural
    assert "def " not in Path(utils.__file__).read_text()
