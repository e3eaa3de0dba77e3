"""`restore` writes the work tree back, and the implementer can plant links there before the
user runs it: a link at a file the snapshot holds, or at a folder on the way, to a place
outside. Nothing outside is written or removed; the links are replaced by what was kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Hook, cli, make_repo, payload
from tests.integration.test_shadow import bash, start_loop


def test_links_planted_before_a_restore_are_replaced_never_written_through(
    tmp_path: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("the user's file outside\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "work.txt").write_text("work in a folder\n")
    (repo / "top.txt").write_text("work at the top\n")
    start_loop(repo, capsys)
    assert hook("UserPromptSubmit", payload("UserPromptSubmit", repo, prompt="go")).code == 0
    bash(
        repo,
        hook,
        f"rm -rf sub top.txt && ln -s {outside} sub && ln -s {outside}/victim.txt top.txt",
    )
    hook("Stop", payload("Stop", repo))

    code, out = cli(capsys, "-C", str(repo), "restore", "--force", "1")

    assert code == 0, out
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "the user's file outside\n"
    assert not (repo / "sub").is_symlink() and not (repo / "top.txt").is_symlink()
    assert (repo / "sub" / "work.txt").read_text() == "work in a folder\n"
    assert (repo / "top.txt").read_text() == "work at the top\n"


def test_a_path_outside_the_work_tree_is_refused(
    tmp_path: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "outside.txt").write_text("outside\n")
    start_loop(repo, capsys)
    hook("Stop", payload("Stop", repo))
    code, out = cli(capsys, "-C", str(repo), "restore", "--force", "1", "../outside.txt")
    assert code != 0 and "not inside" in out, out
    assert (tmp_path / "outside.txt").read_text() == "outside\n"
