"""The runner itself: where a repository is, who commits, what reaches git, how a failure reads.

Real repositories in tmp_path and the real git; the one hanging git is a script that sleeps.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex import gitbinary as binary
from autopilot_codex import gitrepo
from autopilot_codex.gitrepo import runner
from autopilot_codex.sandbox import jail
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


def test_a_git_file_and_a_commondir_reached_through_links_are_read_as_git_reads_them(
    tmp_path: Path,
) -> None:
    # git follows a link at `.git` and at `commondir` (a setup that keeps them elsewhere): the
    # bridge finds the repository the same way, reading small regular files at the link's end.
    main, linked = _linked(tmp_path)
    kept = tmp_path / "kept"
    kept.mkdir()
    (linked / ".git").rename(kept / "git-file")
    (linked / ".git").symlink_to(kept / "git-file")
    git_dir = main / ".git" / "worktrees" / "linked"
    (git_dir / "commondir").rename(kept / "commondir")
    (git_dir / "commondir").symlink_to(kept / "commondir")
    where = runner.locate(linked)
    assert where.git_dir == git_dir.resolve()
    assert where.common_dir == (main / ".git").resolve()


# A file that exists and cannot be read, even by root: reading /proc/self/mem at offset 0 fails.
_UNREADABLE = Path("/proc/self/mem")
needs_proc = pytest.mark.skipif(not _UNREADABLE.is_file(), reason="needs Linux's /proc")


def _unreadable(path: Path, how: str) -> None:
    if how == "link to an unreadable file":
        path.symlink_to(_UNREADABLE)
    else:
        path.write_bytes(b"gitdir: \xff\xfe../..\n")


HOW = ["not UTF-8", pytest.param("link to an unreadable file", marks=needs_proc)]


@pytest.mark.parametrize("how", HOW)
def test_an_unreadable_commondir_falls_back_to_the_git_directory(tmp_path: Path, how: str) -> None:
    main, linked = _linked(tmp_path)
    git_dir = main / ".git" / "worktrees" / "linked"
    (git_dir / "commondir").unlink()
    _unreadable(git_dir / "commondir", how)
    assert runner.locate(linked).common_dir == git_dir.resolve()


@pytest.mark.parametrize("how", HOW)
def test_an_unreadable_git_file_is_an_error(tmp_path: Path, how: str) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    _unreadable(folder / ".git", how)
    with pytest.raises(gitrepo.BridgeError, match="unreadable"):
        runner.locate(folder)


@pytest.mark.parametrize("points_at", ["gitdir", "commondir"])
def test_a_git_pointer_into_a_symlink_loop_is_a_bridge_error(
    tmp_path: Path, points_at: str
) -> None:
    """The implementer can write the worktree's `.git` file (or a linked worktree's
    `commondir`): a pointer into a symlink loop is one line to read, never an internal error."""
    folder = tmp_path / "odd"
    folder.mkdir()
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    if points_at == "gitdir":
        (folder / ".git").write_text(f"gitdir: {loop}/x\n")
        with pytest.raises(gitrepo.BridgeError, match="cannot be resolved"):
            runner.locate(folder)
    else:
        main, linked = _linked(tmp_path)
        git_dir = main / ".git" / "worktrees" / "linked"
        (git_dir / "commondir").write_text(f"{loop}/x\n")
        assert runner.locate(linked).common_dir == git_dir.resolve()


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


def _git_script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "bin" / "git-script"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


class _ManualTimer:
    """The runner's timeout clock, run by the test: it fires when the test says so."""

    made: list[_ManualTimer] = []

    def __init__(self, interval: float, function: Callable[[], None]) -> None:
        self.function = function
        self.daemon = False
        _ManualTimer.made.append(self)

    def start(self) -> None:
        pass

    def cancel(self) -> None:
        pass


def test_identity_goes_on_past_a_lookup_that_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "user.email", "repo@example.com")
    for name in _AUTHOR_VARS:
        monkeypatch.delenv(name)
    # The script marks its start in tmp_path, which the supervisor's sandbox keeps read-only.
    monkeypatch.setattr(jail, "_known", jail.Wall("linux", False, why="a test"))
    started = tmp_path / "started"
    hangs_on_name = (
        f'case "$*" in *user.name*) touch "{started}"; exec sleep 600;; esac\nexec git "$@"'
    )
    monkeypatch.setenv(binary.OVERRIDE, str(_git_script(tmp_path, hangs_on_name)))
    _ManualTimer.made = []
    monkeypatch.setattr(threading, "Timer", _ManualTimer)
    found: list[dict[str, str]] = []
    worker = threading.Thread(target=lambda: found.append(runner.identity(repo)))
    worker.start()
    for _ in range(6000):  # a wedge bound, not a margin: the script starts at once
        if started.exists() and _ManualTimer.made:
            break
        time.sleep(0.01)
    _ManualTimer.made[0].function()  # the user.name lookup's time is up
    worker.join(60)
    assert found == [
        {"GIT_AUTHOR_EMAIL": "repo@example.com", "GIT_COMMITTER_EMAIL": "repo@example.com"}
    ]


def test_a_git_that_disappears_is_a_bridge_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git removed while the bridge runs (its path is resolved once): a one-line BridgeError
    for a call, no identity, never an OSError out of the runner."""
    repo = make_repo(tmp_path / "repo")
    for name in _AUTHOR_VARS:
        monkeypatch.delenv(name)
    script = _git_script(tmp_path, 'exec git "$@"')
    monkeypatch.setenv(binary.OVERRIDE, str(script))
    assert gitrepo.head_sha(repo)  # resolved and cached
    script.unlink()
    with pytest.raises(gitrepo.BridgeError, match="git status failed in"):
        gitrepo.run_git(repo, "status")
    assert runner.identity(repo) == {}
    # A config that includes another is read by git itself, for its filters: that call too
    # (walled, the sandbox reports the missing program and the call after it fails on it).
    git(repo, "config", "include.path", "more.cfg")
    with pytest.raises(gitrepo.BridgeError, match="git (config|status) failed in"):
        gitrepo.run_git(repo, "status")


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


def test_a_lock_in_the_way_is_named_by_its_file() -> None:
    from autopilot_codex.gitrepo.runner import _reason

    err = (
        b"fatal: Unable to create '/r/.git/index.lock': File exists.\n\n"
        b"Another git process seems to be running in this repository.\n"
        b"remove the file manually to continue.\n"
    )
    assert _reason(err) == (
        "fatal: Unable to create '/r/.git/index.lock': File exists. "
        "If no git runs there now, remove that file to go on."
    )
    # A line that names a lock file but no lock in the way is not taken for one.
    assert _reason(b"warning: could not read 'a.lock'\nfatal: bad revision\n") == (
        "fatal: bad revision"
    )
