"""The watch over the files a check must not change, on real files: a link, a folder where a
file was, a file that was not there, and a change the bridge excuses."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.checks.watch import Watch, read


def test_a_link_and_an_unreadable_path_read_as_texts_of_their_own(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("t\n")
    (tmp_path / "link").symlink_to("target")
    assert read(tmp_path / "link") == b"symlink:target"
    (tmp_path / "folder").mkdir()
    assert read(tmp_path / "folder") == b"unreadable: Is a directory"
    assert read(tmp_path / "missing") is None


def test_what_a_check_changed_is_put_back_and_named(tmp_path: Path) -> None:
    kept, added, linked = tmp_path / "settings.json", tmp_path / "new.json", tmp_path / "l.json"
    kept.write_text("mine\n")
    linked.symlink_to(kept)
    watch = Watch([kept, added, linked])
    before = watch.take()
    kept.write_text("the check's\n")
    added.write_text("planted\n")
    linked.unlink()
    linked.write_text("was a link\n")
    assert sorted(watch.settle("make test", before)) == ["l.json", "new.json", "settings.json"]
    assert kept.read_text() == "mine\n" and not added.exists()
    # A link cannot be made again from its bytes: named, not restored.
    assert linked.read_text() == "was a link\n"
    assert watch.tampered == [("make test", ["settings.json", "new.json", "l.json"])]


def test_a_change_the_bridge_excuses_is_kept(tmp_path: Path) -> None:
    own = tmp_path / "state.json"
    own.write_text("before\n")
    watch = Watch([own], excused=lambda path, _before: path == own)
    before = watch.take()
    own.write_text("the bridge's own write\n")
    assert watch.settle("pytest", before) == [] and watch.tampered == []
    assert own.read_text() == "the bridge's own write\n"
