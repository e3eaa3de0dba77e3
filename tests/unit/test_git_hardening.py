"""A review sees the change as git stores it: every hiding trick is shown or named.

Each trick is first shown to hide the marker from plain `git diff` / `git status` (the view
the bridge had before), then the bridge's diff must show it, or name the file with its size
and hash when its content cannot be shown.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex import gitrepo
from autopilot_codex.checks import tree as checks_tree
from tests.conftest import git, make_repo

MARKER = "MARKER-7f3a"


def _plain(repo: Path) -> str:
    """What the bridge used to see: tracked diff plus standard untracked files."""
    tracked = git(repo, "diff", "HEAD", "--no-ext-diff")
    others = git(repo, "ls-files", "--others", "--exclude-standard")
    return (
        tracked
        + "\n"
        + others
        + "\n"
        + "".join(
            (repo / n).read_text(errors="replace")
            for n in others.splitlines()
            if (repo / n).is_file()
        )
    )


def info_exclude(repo: Path) -> None:
    (repo / ".git/info/exclude").write_text("scratch/\n")
    (repo / "scratch").mkdir()
    (repo / "scratch/run.py").write_text(f"print('{MARKER}')\n")


def excludes_file(repo: Path) -> None:
    ignore = repo.parent / "ignore"
    ignore.write_text("*.py\n")
    git(repo, "config", "core.excludesFile", str(ignore))
    (repo / "tool.py").write_text(f"{MARKER} = 1\n")


def skip_worktree(repo: Path) -> None:
    git(repo, "update-index", "--skip-worktree", "a.txt")
    (repo / "a.txt").write_text(f"{MARKER}\n")


def assume_unchanged(repo: Path) -> None:
    git(repo, "update-index", "--assume-unchanged", "a.txt")
    (repo / "a.txt").write_text(f"{MARKER}\n")


def no_diff_info(repo: Path) -> None:
    (repo / ".git/info/attributes").write_text("* -diff\n")
    (repo / "a.txt").write_text(f"{MARKER}\n")


def binary_attribute(repo: Path) -> None:
    (repo / ".git/info/attributes").write_text("a.txt binary\n")
    (repo / "a.txt").write_text(f"{MARKER}\n")


def driver_binary(repo: Path) -> None:
    git(repo, "config", "diff.opaque.binary", "true")
    (repo / ".git/info/attributes").write_text("* diff=opaque\n")
    (repo / "a.txt").write_text(f"{MARKER}\n")


def replace_ref(repo: Path) -> None:
    (repo / "a.txt").write_text(f"{MARKER}\n")
    new = git(repo, "hash-object", "-w", "a.txt")
    old = git(repo, "rev-parse", "HEAD:a.txt")
    git(repo, "replace", old, new)
    git(repo, "add", "a.txt")


def worktree_decoy(repo: Path) -> None:
    decoy = repo.parent / "decoy"
    shutil.copytree(repo, decoy, ignore=shutil.ignore_patterns(".git"))
    git(repo, "config", "core.worktree", str(decoy))
    (repo / "a.txt").write_text(f"{MARKER}\n")


def untracked_hidden_setting(repo: Path) -> None:
    git(repo, "config", "status.showUntrackedFiles", "no")
    (repo / ".git/info/exclude").write_text("*\n")
    (repo / "n.txt").write_text(f"{MARKER}\n")


def mtime_reset(repo: Path) -> None:
    """Same size, mtime put back, ctime trust switched off: git's stat check sees nothing."""
    git(repo, "config", "core.trustctime", "false")
    git(repo, "config", "core.checkStat", "minimal")
    before = (repo / "a.txt").stat()
    (repo / "a.txt").write_text("evi\n")  # the size of "one\n"
    os.utime(repo / "a.txt", ns=(before.st_atime_ns, before.st_mtime_ns))


TRICKS: dict[str, tuple[Callable[[Path], None], str]] = {
    ".git/info/exclude": (info_exclude, MARKER),
    "core.excludesFile": (excludes_file, MARKER),
    "skip-worktree": (skip_worktree, MARKER),
    "assume-unchanged": (assume_unchanged, MARKER),
    "* -diff": (no_diff_info, MARKER),
    "binary attribute": (binary_attribute, MARKER),
    "diff.<driver>.binary": (driver_binary, MARKER),
    "git replace": (replace_ref, MARKER),
    "core.worktree decoy": (worktree_decoy, MARKER),
    "status.showUntrackedFiles=no": (untracked_hidden_setting, MARKER),
    "mtime reset": (mtime_reset, "+evi"),
}


@pytest.mark.parametrize("name", list(TRICKS))
def test_each_hiding_trick_is_shown(tmp_path: Path, name: str) -> None:
    plant, expected = TRICKS[name]
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "b.txt": "two\n"})
    base = gitrepo.head_sha(repo)
    git(repo, "update-index", "--refresh")
    plant(repo)
    if name != "mtime reset":  # git's racy-entry check may still catch this one
        assert expected not in _plain(repo), f"{name} should hide the change from plain git"
    diff = gitrepo.diff_since(repo, base)
    assert expected in diff.text, name


def test_the_git_directory_settings_are_a_section_and_findings(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = gitrepo.head_sha(repo)
    git(repo, "config", "core.fsmonitor", "./x.sh")
    git(repo, "config", "diff.x.textconv", "./y.sh")
    git(repo, "config", "core.excludesFile", "/tmp/ignore")
    git(repo, "update-index", "--skip-worktree", "README.md")
    (repo / ".git/hooks/pre-commit").write_text("#!/bin/sh\n")
    (repo / ".git/info/attributes").write_text("* filter=x\n")
    (repo / ".git/info/exclude").write_text("/.autopilot-codex/\nsecret-stuff/\n")
    diff = gitrepo.diff_since(repo, base, exclude=(".autopilot-codex",))
    assert not diff.empty
    where = {f.where for f in diff.findings}
    assert {"core.fsmonitor", "diff.x.textconv", "core.excludesfile"} <= {w.lower() for w in where}
    assert {"hooks/pre-commit", "info/attributes", "info/exclude", "README.md"} <= where
    assert "# git: settings and files" in diff.text and "./x.sh" in diff.text
    excludes = [f.detail for f in diff.findings if f.kind == "exclude"]
    assert excludes == ["'secret-stuff/' hides untracked files"]  # the loop's own line is not


def test_replace_refs_are_findings(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    replace_ref(repo)
    assert any(f.kind == "replace" for f in gitrepo.findings(repo))


def test_a_clean_repository_has_no_findings(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "core.hooksPath", "")  # switched off: not a finding
    assert gitrepo.findings(repo) == []
    assert gitrepo.diff_since(repo, gitrepo.head_sha(repo)).empty


def test_a_symlink_to_a_secret_is_reviewed_as_a_link(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = gitrepo.head_sha(repo)
    (repo / ".env").write_text("OPENAI_API_KEY=sk-live-SECRETVALUE\n")
    (repo / "config.txt").symlink_to(".env")
    outside = tmp_path / "id_rsa"
    outside.write_text("PRIVATE-KEY-BODY\n")
    (repo / "notes.md").symlink_to(outside)
    diff = gitrepo.diff_since(repo, base)
    assert "SECRETVALUE" not in diff.text and "PRIVATE-KEY-BODY" not in diff.text
    assert "new file mode 120000" in diff.text
    assert "+.env" in diff.text and f"+{outside}" in diff.text
    assert {"config.txt", "notes.md"} <= set(diff.files)


def test_a_tracked_file_turned_into_a_link_shows_its_target(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", ".env": "K=SECRETVALUE\n"})
    base = gitrepo.head_sha(repo)
    (repo / "a.txt").unlink()
    (repo / "a.txt").symlink_to(".env")
    git(repo, "update-index", "--skip-worktree", "a.txt")
    diff = gitrepo.diff_since(repo, base)
    assert "SECRETVALUE" not in diff.text and ".env" in diff.text


def test_large_and_binary_files_are_named_with_size_and_hash(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.bin": "x\n"})
    base = gitrepo.head_sha(repo)
    big = ("line\n" * 20000 + MARKER + "\n").encode()
    (repo / "big.txt").write_bytes(big)
    blob = b"\0\1\2" * 100
    (repo / "a.bin").write_bytes(blob)
    (repo / "new.bin").write_bytes(blob)
    diff = gitrepo.diff_since(repo, base)
    for data in (big, blob):
        assert f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}" in diff.text
    assert "\0" not in diff.text
    assert {"big.txt", "a.bin", "new.bin"} <= set(diff.files)


def test_every_new_file_is_named_past_the_bound(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = gitrepo.head_sha(repo)
    (repo / "many").mkdir()
    count = gitrepo.UNTRACKED_FILES_MAX + 5
    for n in range(count):
        (repo / f"many/f{n:04}.txt").write_text(f"{n}\n")
    diff = gitrepo.diff_since(repo, base)
    last = f"many/f{count - 1:04}.txt"
    sha = hashlib.sha256(f"{count - 1}\n".encode()).hexdigest()
    assert last in diff.text and sha in diff.text and len(diff.files) == count


def test_a_gitignore_entry_the_change_adds_names_what_it_hides(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = gitrepo.head_sha(repo)
    (repo / ".gitignore").write_text("payload/\nsolo.txt\n")
    (repo / "payload").mkdir()
    (repo / "payload/run.sh").write_text(f"echo {MARKER}\n")
    (repo / "solo.txt").write_text(f"{MARKER}\n")
    diff = gitrepo.diff_since(repo, base)
    assert "# - payload/ (directory)" in diff.text
    assert "# - solo.txt (" in diff.text


def test_an_ignore_the_user_committed_earlier_is_respected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".gitignore": "build/\n"})
    base = gitrepo.head_sha(repo)
    (repo / "build").mkdir()
    (repo / "build/out.js").write_text("generated\n")
    assert gitrepo.diff_since(repo, base).empty


def test_the_checks_digest_sees_a_file_hidden_by_info_exclude(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / ".git/info/exclude").write_text("hidden.py\n")
    git(repo, "config", "status.showUntrackedFiles", "no")
    before = checks_tree.tree_hash(repo)
    (repo / "hidden.py").write_text("x = 1\n")
    assert checks_tree.tree_hash(repo) != before


def test_committing_a_new_file_keeps_the_review_key(tmp_path: Path) -> None:
    from autopilot_codex.styles.autopilot.effects import diff_key

    repo = make_repo(tmp_path / "repo")
    base = gitrepo.head_sha(repo)
    (repo / "n.py").write_text("x = 1\n")
    untracked = diff_key(gitrepo.diff_since(repo, base))
    git(repo, "add", "n.py")
    git(repo, "commit", "-qm", "n")
    assert diff_key(gitrepo.diff_since(repo, base)) == untracked


def test_a_subdirectory_path_finds_its_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "a\n"})
    assert gitrepo.toplevel(repo / "src") == repo.resolve()
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    where = gitrepo.locate(linked)
    assert where.work_tree == linked.resolve()
    assert where.common_dir == (repo / ".git").resolve()
    assert gitrepo.head_sha(linked) == gitrepo.head_sha(repo)


def test_plain_git_is_unchanged_by_the_bridge(tmp_path: Path) -> None:
    """The bridge's reads leave the user's index as it was (no optional lock refresh)."""
    repo = make_repo(tmp_path / "repo")
    index = (repo / ".git/index").read_bytes()
    (repo / "README.md").write_text("changed\n")
    checks_tree.tree_hash(repo)
    gitrepo.diff_since(repo, gitrepo.head_sha(repo))
    assert (repo / ".git/index").read_bytes() == index
    assert subprocess.run(["git", "diff", "--quiet"], cwd=repo).returncode == 1


def test_the_checks_digest_sees_an_edit_under_skip_worktree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    git(repo, "update-index", "--skip-worktree", "a.txt")
    before = checks_tree.tree_hash(repo)
    (repo / "a.txt").write_text("two\n")
    assert checks_tree.tree_hash(repo) != before


@pytest.mark.parametrize("trick", ["skip-worktree", "assume-unchanged", "info/exclude"])
def test_a_round_snapshot_sees_what_the_index_or_exclude_hides(tmp_path: Path, trick: str) -> None:
    from autopilot_codex.rounds import tree

    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    before = tree.snapshot(repo)
    if trick == "info/exclude":
        (repo / ".git/info/exclude").write_text("hidden.txt\n")
        (repo / "hidden.txt").write_text("x\n")
        expected = ["hidden.txt"]
    else:
        git(repo, "update-index", f"--{trick}", "a.txt")
        (repo / "a.txt").write_text("two\n")
        expected = ["a.txt"]
    after = tree.snapshot(repo)
    assert tree.changed_between(repo, before, after) == expected
