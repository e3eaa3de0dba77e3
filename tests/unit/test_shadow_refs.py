"""The shadow history's refs, on real repositories: HEAD, moved branches and stash entries are
noticed when lost and put back by a restore; what cannot be read is read as nothing."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.gitrepo.runner import Location
from autopilot_codex.shadow import loss, refs, repo, snapshot
from autopilot_codex.shadow.back import restore
from autopilot_codex.shadow.history import parse
from tests.conftest import git, make_repo


def stash(repo_path: Path, name: str, text: str) -> None:
    (repo_path / "README.md").write_text(text)
    git(repo_path, "stash", "push", "-q", "-m", name)


def test_a_dropped_stash_entry_under_the_top_one_is_noticed_and_put_back(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo")
    stash(work, "older", "one\n")
    stash(work, "newer", "two\n")
    shadow = repo.at(work)
    snapshot.take(shadow, "start")
    git(work, "stash", "drop", "-q", "stash@{1}")

    taken = snapshot.take(shadow, "after")

    assert taken.lost == ("stash entry dropped: On main: older",)
    done = restore(shadow, "1")
    assert "refs/stash" in done.refs
    assert git(work, "stash", "list", "--format=%gs").splitlines() == [
        "On main: newer",
        "On main: older",
    ]


def test_a_branch_moved_back_and_head_moved_away_come_back(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo")
    (work / "two.txt").write_text("two\n")
    git(work, "add", "two.txt")
    git(work, "commit", "-q", "-m", "two")
    tip = git(work, "rev-parse", "HEAD")
    shadow = repo.at(work)
    snapshot.take(shadow, "start")
    git(work, "reset", "-q", "--hard", "HEAD~1")
    git(work, "checkout", "-q", "-b", "elsewhere")

    taken = snapshot.take(shadow, "after")
    assert taken.lost == ("refs/heads/main: moved, losing 1 commit no other ref holds",)
    git(work, "reflog", "expire", "--expire=now", "--all")
    git(work, "gc", "-q", "--prune=now")

    done = restore(shadow, "1")

    assert done.refs == ("refs/heads/main", "HEAD")
    # A branch made since is left alone.
    assert git(work, "rev-parse", "--verify", "-q", "elsewhere")
    assert git(work, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(work, "rev-parse", "HEAD") == tip
    assert git(work, "status", "--porcelain") == ""
    assert (work / "two.txt").read_text() == "two\n"


def test_a_detached_head_comes_back_and_a_fast_forward_is_no_loss(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo")
    first = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", "--detach")
    shadow = repo.at(work)
    snapshot.take(shadow, "start")
    git(work, "checkout", "-q", "main")
    git(work, "commit", "-q", "--allow-empty", "-m", "forward")

    assert snapshot.take(shadow, "after").lost == ()
    done = restore(shadow, "1")

    assert "HEAD" in done.refs
    assert git(work, "rev-parse", "HEAD") == first
    assert git(work, "rev-parse", "--abbrev-ref", "HEAD") == "HEAD"


def test_what_cannot_be_read_is_read_as_nothing(tmp_path: Path) -> None:
    nowhere = Location(tmp_path, tmp_path / "no-git", tmp_path / "no-git")
    assert refs.stash_entries(nowhere) == ()
    assert refs.Refs.of_json("not a dict") == refs.Refs()
    assert refs.Refs.of_json({"stash": [["a", "b"], "bad"], "refs": []}).stash == (("a", "b"),)
    odd = parse("c" * 40, b"tree " + b"t" * 40 + b"\n\nautopilot-codex snapshot\n\n{not json")
    assert (odd.tree, odd.meta.n, odd.meta.point) == ("t" * 40, 0, "?")
    work = make_repo(tmp_path / "repo")
    shadow = repo.at(work)
    snapshot.take(shadow, "start")
    assert loss._alone(shadow, "0" * 40, []) == 0


def test_attributes_and_filters_of_the_work_tree_never_change_what_is_kept(
    tmp_path: Path,
) -> None:
    """Attack: the implementer asks git to convert line ends and to run a clean filter on
    what the bridge keeps. The shadow has its own config and an `info/attributes` that
    switches every conversion off: the bytes kept are the bytes on disk, nothing runs."""
    work = make_repo(tmp_path / "repo")
    canary = tmp_path / "canary"
    (work / ".gitattributes").write_text("* text eol=crlf filter=evil\n")
    git(work, "config", "filter.evil.clean", f"touch {canary}; cat")
    raw = b"line one\r\nline two\nno newline at the end\r"
    (work / "data.txt").write_bytes(raw)
    shadow = repo.at(work)
    taken = snapshot.take(shadow, "start")
    (work / "data.txt").write_bytes(b"overwritten\n")

    restore(shadow, str(taken.snapshot.meta.n), "data.txt")

    assert (work / "data.txt").read_bytes() == raw
    assert not canary.exists()
