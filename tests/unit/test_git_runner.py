"""The runner itself: where a repository is, who commits, what reaches git, how a failure reads.

Real repositories in tmp_path and the real git; the one hanging git is a script that sleeps.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from autopilot_codex import gitrepo
from autopilot_codex.gitrepo import binary, runner
from tests.conftest import git, make_repo

_AUTHOR_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def _linked(tmp_path: Path) -> tuple[Path, Path]:
    main = make_repo(tmp_path / "main", {"a.txt": "one\n", "sub/b.txt": "two\n"})
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "side", str(linked))
    return main, linked


def test_a_linked_worktree_is_found_through_its_git_file(tmp_path: Path) -> None:
    main, linked = _linked(tmp_path)
    where = runner.locate(linked / "sub")
    assert where.work_tree == linked.resolve()
    assert where.git_dir == (main / ".git" / "worktrees" / "linked").resolve()
    assert where.common_dir == (main / ".git").resolve()
    (linked / "a.txt").write_text("edited in the linked tree\n")
    assert gitrepo.run_git(linked, "status", "--porcelain").splitlines() == [" M a.txt"]


def test_an_unreadable_commondir_falls_back_to_the_git_directory(tmp_path: Path) -> None:
    main, linked = _linked(tmp_path)
    git_dir = main / ".git" / "worktrees" / "linked"
    (git_dir / "commondir").write_bytes(b"\xff\xfe../..\n")
    assert runner.locate(linked).common_dir == git_dir.resolve()


def test_a_git_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / ".git").write_bytes(b"gitdir: \xff\xfe\n")
    with pytest.raises(gitrepo.BridgeError, match="unreadable"):
        runner.locate(folder)


def test_a_git_file_without_gitdir_is_passed_over(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "outer")
    inner = repo / "inner"
    inner.mkdir()
    (inner / ".git").write_text("not a pointer\n")
    assert runner.locate(inner).work_tree == repo.resolve()


def test_identity_is_read_from_the_user_s_config_where_the_environment_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    for name in _AUTHOR_VARS:
        monkeypatch.delenv(name)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    home = Path(os.environ["HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Home Name\n\temail = home@example.com\n")
    assert runner.identity(repo) == {
        "GIT_AUTHOR_NAME": "Home Name",
        "GIT_COMMITTER_NAME": "Home Name",
        "GIT_AUTHOR_EMAIL": "home@example.com",
        "GIT_COMMITTER_EMAIL": "home@example.com",
    }
    # What the environment already gives stays the environment's.
    monkeypatch.setenv("GIT_COMMITTER_NAME", "From Env")
    assert "GIT_COMMITTER_NAME" not in runner.identity(repo)
    # An empty value is no name.
    git(repo, "config", "user.name", "")
    assert set(runner.identity(repo)) == {"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"}


def test_identity_reads_the_xdg_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    for name in _AUTHOR_VARS:
        monkeypatch.delenv(name)
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "config").write_text("[user]\n\temail = xdg@example.com\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert runner.identity(repo) == {
        "GIT_AUTHOR_EMAIL": "xdg@example.com",
        "GIT_COMMITTER_EMAIL": "xdg@example.com",
    }


def test_identity_from_a_git_that_hangs_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    for name in _AUTHOR_VARS:
        monkeypatch.delenv(name)
    hung = tmp_path / "bin" / "git-hangs"
    hung.parent.mkdir()
    hung.write_text("#!/bin/sh\nexec sleep 600\n")
    hung.chmod(0o755)
    monkeypatch.setenv(binary.OVERRIDE, str(hung))
    monkeypatch.setattr(runner, "GIT_TIMEOUT_S", 0.2)
    assert runner.identity(repo) == {}


def test_author_passes_only_the_identity(tmp_path: Path) -> None:
    """`author` names who commits; a program smuggled in with it (here the editor a commit
    with `--edit` starts) never runs."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    ran = tmp_path / "ran.log"
    canary = tmp_path / "canary.sh"
    canary.write_text(f'#!/bin/sh\necho ran >> "{ran}"\n')
    canary.chmod(0o755)
    (repo / "a.txt").write_text("two\n")
    author = {
        "GIT_AUTHOR_NAME": "Given Name",
        "GIT_AUTHOR_EMAIL": "given@example.com",
        "GIT_EDITOR": str(canary),
    }
    gitrepo.run_git(repo, "commit", "-q", "-a", "--edit", "-m", "given", author=author)
    assert not ran.exists()
    assert git(repo, "log", "-1", "--format=%an <%ae> %s") == "Given Name <given@example.com> given"


def test_stdin_reaches_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    out = runner.run_bytes(repo, "hash-object", "--stdin", stdin=b"hello\n")
    expected = subprocess.run(
        ["git", "hash-object", "--stdin"], input=b"hello\n", capture_output=True, check=True
    ).stdout
    assert out == expected


def test_a_failure_names_git_s_last_line_or_its_exit_code(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(gitrepo.BridgeError) as raised:
        gitrepo.run_git(repo, "log", "no-such-revision")
    # git explains over three lines; the last is the one shown.
    assert str(raised.value).endswith("'git <command> [<revision>...] -- [<file>...]'")
    with pytest.raises(gitrepo.BridgeError) as raised:
        gitrepo.run_git(repo, "rev-parse", "--verify", "--quiet", "no-such-revision")
    assert str(raised.value).endswith(f"failed in {repo}: 1")
    assert gitrepo.run_git(repo, "diff", "--quiet", ok_codes=(0, 1)) == ""
