"""Reading a host's record from where the last look stopped: only whole lines, only those that
may hold usage, and a record cut short or rewritten under the reader noticed."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.hosts import spendfile


def lines(
    path: Path, offset: int = 0, head: str = "", needles: tuple[bytes, ...] = ()
) -> tuple[list[bytes], spendfile.Scanned | None]:
    got: list[bytes] = []
    return got, spendfile.scan(str(path), offset, head, got.append, needles=needles)


def test_only_lines_with_a_needle_are_handed_on_each_once_in_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        b'{"a":"usage"}\nplain\n{"usage":1,"usage":2}\nusage at the start\nend "usage" but unfinished'
    )
    got, scanned = lines(path, needles=(b"usage", b'"usage"'))
    assert got == [b'{"a":"usage"}', b'{"usage":1,"usage":2}', b"usage at the start"]
    assert scanned is not None and scanned.offset == path.read_bytes().rfind(b"\n") + 1


def test_a_record_that_has_not_grown_is_not_read_again(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"one\n")
    _, first = lines(path)
    assert first is not None
    got, again = lines(path, first.offset, first.head)
    assert got == [] and again == first


def test_a_rewrite_is_noticed_where_the_digest_reaches(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    body = b"x" * 10_000 + b"\n"
    path.write_bytes(body + b"tail\n")
    _, first = lines(path)
    assert first is not None
    # A change in the middle, out of the digest's reach, and one near the end, within it.
    path.write_bytes(b"x" * 5_000 + b"y" + b"x" * 4_999 + b"\n" + b"tail\nnew\n")
    assert lines(path, first.offset, first.head)[1].tampered == ""  # type: ignore[union-attr]
    path.write_bytes(body + b"TAIL\nnew\n")
    got, again = lines(path, first.offset, first.head)
    assert again is not None and again.tampered.startswith("rewritten") and got == [b"new"]


def test_a_folder_named_as_the_record_reads_nothing(tmp_path: Path) -> None:
    # A payload may name a folder (the root, the session's own folder): Python refuses to wrap
    # a folder's descriptor, which once surfaced as an internal error in every hook.
    for folder in (tmp_path, Path("/")):
        got, scanned = lines(folder)
        assert got == [] and scanned is None
