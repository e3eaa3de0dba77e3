"""The review reads the work tree inside the work tree: a link a round planted, at a file or at
a folder on the way (`cfg -> ~/.aws`, a submodule's folder -> `~/.ssh`), is shown as a link and
never followed, so the bytes it points at never reach the manager."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autopilot_codex import gitrepo, nofollow
from autopilot_codex.checks.tree import tree_hash
from autopilot_codex.gitrepo import tamper
from tests.conftest import git, make_repo

SECRET = "aws_secret_access_key = SECRET-BYTES-OUTSIDE\n"


def _outside(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "home-store"
    folder.mkdir()
    (folder / name).write_text(SECRET)
    return folder


def test_a_flagged_file_behind_a_folder_link_is_never_read_through(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "top", {"app.py": "x = 1\n", "cfg/app.ini": "template\n"})
    base = gitrepo.head_sha(top)
    # git's diff skips an assume-unchanged file, so the review reads it from the disk itself.
    git(top, "update-index", "--assume-unchanged", "cfg/app.ini")
    (top / "cfg/app.ini").unlink()
    (top / "cfg").rmdir()
    (top / "cfg").symlink_to(_outside(tmp_path, "app.ini"), target_is_directory=True)
    diff = gitrepo.diff_since(top, base)
    assert "SECRET-BYTES" not in diff.text
    assert "new file mode 120000\n--- /dev/null\n+++ b/cfg" in diff.text  # shown as a link


def test_a_submodule_folder_swapped_for_a_link_is_never_read_through(tmp_path: Path) -> None:
    dep = make_repo(tmp_path / "dep", {"lib.py": "def f():\n    return 1\n"})
    top = make_repo(tmp_path / "top", {"app.py": "print(1)\n"})
    git(top, "clone", "-q", str(dep), "sub")
    git(top, "update-index", "--add", "--cacheinfo", f"160000,{gitrepo.head_sha(dep)},sub")
    git(top, "commit", "-qm", "a submodule")
    baseline = tmp_path / "state" / "nested.json"
    gitrepo.record_nested(top, baseline)
    base = gitrepo.head_sha(top)
    (top / "sub").rename(tmp_path / "moved-away")
    (top / "sub").symlink_to(_outside(tmp_path, "notes.txt"), target_is_directory=True)
    diff = gitrepo.diff_since(top, base, baseline=baseline)
    assert "SECRET-BYTES" not in diff.text
    assert "sub/notes.txt" not in diff.text  # nothing listed from beyond the link either


def test_the_checks_digest_never_reads_through_a_folder_link(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "top", {"app.py": "x = 1\n", "cfg/app.ini": "template\n"})
    (top / "cfg/app.ini").unlink()
    (top / "cfg").rmdir()
    away = _outside(tmp_path, "app.ini")
    (top / "cfg").symlink_to(away, target_is_directory=True)
    before = tree_hash(top)
    (away / "app.ini").write_text("changed outside, never read\n")
    assert tree_hash(top) == before


def test_the_checks_digest_names_what_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = make_repo(tmp_path / "top", {"a.txt": "a\n", "b.txt": "b\n"})
    (top / "a.txt").write_text("a, edited\n")
    (top / "b.txt").write_text("b, edited\n")
    before = tree_hash(top)
    real_lstat = nofollow.lstat

    def flaky(root: Path, rel: str) -> os.stat_result:
        if rel == "a.txt":
            raise PermissionError(13, "denied")
        return real_lstat(root, rel)

    def swapped(root: Path, rel: str) -> object:
        raise nofollow.LinkRefused("swapped for a link since")

    monkeypatch.setattr(nofollow, "lstat", flaky)
    monkeypatch.setattr(nofollow, "reading", swapped)
    assert tree_hash(top) != before


def test_an_info_file_linked_to_a_secret_is_never_read_into_the_findings(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "top", {"app.py": "x = 1\n"})
    away = _outside(tmp_path, "credentials")
    info = top / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "exclude").unlink(missing_ok=True)
    (info / "exclude").symlink_to(away / "credentials")
    (info / "attributes").symlink_to(away / "credentials")
    said = [f.line() for f in tamper.findings(top)]
    assert not any("SECRET-BYTES" in line for line in said), said
    assert any("info/exclude" in line and "link" in line for line in said), said


def test_a_nested_repository_naming_a_git_dir_outside_is_not_read(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "top", {"app.py": "x = 1\n"})
    elsewhere = tmp_path / "user-git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    (elsewhere / "config").write_text(
        "[credential]\n\thelper = !echo password=SECRET-BYTES-OUTSIDE\n"
    )
    # A gitlink in the index: the review lists it whatever its folder holds.
    git(top, "update-index", "--add", "--cacheinfo", f"160000,{gitrepo.head_sha(top)},sub")
    (top / "sub").mkdir()
    (top / "sub" / ".git").write_text(f"gitdir: {elsewhere}\n")
    said = [f.line() for f in gitrepo.diff_since(top, gitrepo.head_sha(top)).findings]
    assert not any("SECRET-BYTES" in line for line in said), said
    assert any("sub/" in line and "outside the work tree" in line for line in said), said
