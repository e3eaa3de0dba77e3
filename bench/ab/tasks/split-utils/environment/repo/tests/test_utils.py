from utils import clamp, human_size, parse_bool, plural


def test_helpers() -> None:
    assert human_size(2048) == "2.0 KiB"
    assert plural(2, "file") == "2 files"
    assert parse_bool("true") is True
    assert clamp(5, 0, 3) == 3
