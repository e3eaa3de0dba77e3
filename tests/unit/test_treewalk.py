"""The one walk of a work tree at a loop's start (`treewalk`): link-free, git's bulk left out,
nested repositories found and stat'd, and shared only inside its block."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex import treewalk
from autopilot_codex.gitrepo import nested
from autopilot_codex.runfiles import nested_git, scan


def _write(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    _write(root / "src" / "a.py")
    _write(root / ".git" / "config")
    _write(root / ".git" / "objects" / "ab" / "cdef")
    _write(root / ".git" / "hooks" / "pre-commit")
    _write(root / "vendor" / "inner" / "lib.py", "inner\n")
    _write(root / "vendor" / "inner" / "deep" / "more.py", "more\n")
    _write(root / "vendor" / "inner" / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(root / "vendor" / "inner" / "sub" / ".git", "gitdir: elsewhere\n")
    (tmp_path / "outside").mkdir()
    _write(tmp_path / "outside" / "secret.txt")
    (root / "linked").symlink_to(tmp_path / "outside")
    return root


def test_the_walk_names_everything_but_git_bulk_and_follows_no_link(tree: Path) -> None:
    walked = dict(treewalk.walk(tree).entries)
    assert walked["src/a.py"] is False
    assert walked["src"] is True
    assert ".git/config" in walked and ".git/hooks/pre-commit" in walked
    assert ".git/objects" in walked and ".git/objects/ab" not in walked
    # A link to a folder is an entry, never a folder entered.
    assert walked["linked"] is False
    assert not any(rel.startswith("linked/") for rel in walked)


def test_a_nested_repository_is_found_and_its_files_stat_d(tree: Path) -> None:
    walked = treewalk.walk(tree)
    assert walked.repos == frozenset({"vendor/inner", "vendor/inner/sub"})
    assert "vendor/inner/lib.py" in walked.stats
    assert "src/a.py" not in walked.stats  # the rest of the tree costs no stat
    assert nested_git(tree) == (tree / "vendor" / "inner" / ".git",)


def test_a_missing_root_walks_nothing(tmp_path: Path) -> None:
    assert treewalk.walk(tmp_path / "missing") == treewalk.Tree()


def test_a_root_behind_a_link_is_walked(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "via").symlink_to(tree)
    assert "src/a.py" in dict(treewalk.walk(tmp_path / "via").entries)


def test_a_folder_that_cannot_be_listed_or_opened_is_passed_over(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = dict(treewalk.walk(tree).entries)
    real_scandir, real_open = os.scandir, os.open

    def scandir(fd: int) -> Iterator[os.DirEntry[str]]:
        if str(Path(f"/proc/self/fd/{fd}").readlink()).endswith("/src"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(fd)

    def opened(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if path == "deep":
            raise FileNotFoundError(2, "gone since it was listed")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", opened)
    walked = dict(treewalk.walk(tree).entries)
    assert set(walked) == {
        rel for rel in whole if not rel.startswith(("src/", "vendor/inner/deep/"))
    }
    assert walked["src"] is True and walked["vendor/inner/deep"] is True


def test_no_descriptor_is_left_open_when_the_walk_fails(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.scandir
    calls: list[int] = []

    def broken(fd: int) -> Iterator[os.DirEntry[str]]:
        calls.append(fd)
        if len(calls) == 3:
            raise RuntimeError("interrupted")
        return real(fd)

    before = len(list(Path("/proc/self/fd").iterdir()))
    monkeypatch.setattr(os, "scandir", broken)
    with pytest.raises(RuntimeError):
        treewalk.walk(tree)
    monkeypatch.undo()
    assert len(list(Path("/proc/self/fd").iterdir())) == before


def test_the_shared_walk_holds_only_inside_its_block(tree: Path) -> None:
    with treewalk.shared(tree):
        first = treewalk.tree(tree)
        _write(tree / ".mcp.json", "{}")
        assert treewalk.tree(tree) is first
        assert ".mcp.json" not in scan(tree, (".mcp.json",))
    assert treewalk.sharing(tree) is None
    assert ".mcp.json" in scan(tree, (".mcp.json",))


def test_a_nested_repository_reads_the_same_from_the_shared_walk(tree: Path) -> None:
    (tree / "vendor" / "inner" / "link").symlink_to("/etc/passwd")
    alone = dict(nested.walk(tree, "vendor/inner"))
    with treewalk.shared(tree):
        shared = dict(nested.walk(tree, "vendor/inner"))
        # A folder the walk did not see holding a `.git` is walked on its own, as before.
        assert dict(nested.walk(tree, "src")) == {"src/a.py": os.lstat(tree / "src" / "a.py")}
    assert shared == alone
    assert set(shared) == {"vendor/inner/lib.py", "vendor/inner/deep/more.py", "vendor/inner/link"}
