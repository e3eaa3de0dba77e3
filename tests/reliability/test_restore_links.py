"""`restore` writes the work tree back, and the implementer can plant links there before the
user runs it: a link at a file the snapshot holds, or at a folder on the way, to a place
outside. Nothing outside is written or removed; the links are replaced by what was kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Hook, cli, git, make_repo, payload
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


def test_a_git_link_swapped_in_before_a_restore_moves_no_other_repositorys_refs(
    tmp_path: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    """`.git` replaced by a `gitdir:` file naming another repository of the user's: the
    restore's refs (branches, HEAD, the stash) would be written there, moving its branches."""
    repo = make_repo(tmp_path / "repo")
    # The user's second clone of the project, working on a branch of its own.
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    git(other, "checkout", "-q", "-b", "theirs")
    before = git(other, "symbolic-ref", "HEAD"), git(other, "for-each-ref")
    start_loop(repo, capsys)
    hook("Stop", payload("Stop", repo))
    shutil.move(str(repo / ".git"), str(tmp_path / "repo-git"))
    (repo / ".git").write_text(f"gitdir: {other / '.git'}\n")

    code, out = cli(capsys, "-C", str(repo), "restore", "--force", "1")

    assert (git(other, "symbolic-ref", "HEAD"), git(other, "for-each-ref")) == before
    assert code != 0 and "another repository" in out, out
