"""A repository inside the work tree is data: no git of the bridge or the driver enters it.

The attack (issue 33): a nested repository, a staged gitlink or a submodule whose own config
names a program (a clean filter with a driver name the top repository does not define was
enough); the bridge's git descended into it and ran the program as the user, outside the
wall. Before the fix, the review, the checks' digest, the snapshot and the commit each ran the
planted clean and process filters (markers `filter-clean`, `filter-process`,
`include-clean`). Each path below now runs none, and what lies inside is still seen, from
bytes read in Python.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex import gitrepo
from autopilot_codex.checks.tree import tree_hash
from autopilot_codex.gitrepo import inside, nested, tamper
from autopilot_codex.rounds.commit import commit_round
from autopilot_codex.rounds.tree import changed_between, snapshot
from tests.conftest import git, make_repo
from tests.nested_plant import HOOKS, KEYS, plant_all, ran


def _review(top: Path) -> gitrepo.Diff:
    return gitrepo.diff_since(top, gitrepo.head_sha(top), baseline=top.parent / "nested.json")


def _snapshots(top: Path) -> object:
    before = snapshot(top)
    (top / "loose/a.txt").write_text("three\n")
    return changed_between(top, before, snapshot(top))


PATHS: dict[str, Callable[[Path], object]] = {
    "review": _review,
    "review names": lambda top: gitrepo.changed_names(top, gitrepo.head_sha(top)),
    "review findings": lambda top: tamper.findings(top),
    "record baseline": lambda top: gitrepo.record_nested(top, top.parent / "nested.json"),
    "checks digest": tree_hash,
    "rounds snapshot": _snapshots,
    "rounds commit": lambda top: commit_round(top, "round one", 1, "run-1"),
    "report commits": lambda top: gitrepo.commits_since(top, gitrepo.EMPTY_TREE),
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_no_program_planted_in_a_nested_repository_runs(path: str, tmp_path: Path) -> None:
    top, markers = plant_all(tmp_path)
    PATHS[path](top)
    assert ran(markers) == []


def test_the_plant_is_live_for_a_git_that_enters_the_repository(tmp_path: Path) -> None:
    # The control: the user's own git inside the nested repository runs the planted filter,
    # so an empty marker folder above means the bridge stayed out, not that the plant failed.
    top, markers = plant_all(tmp_path)
    git(top / "loose", "status", "--porcelain")
    assert any(m.startswith("filter-clean") for m in ran(markers))


def test_the_commit_leaves_nested_repositories_and_names_them(tmp_path: Path) -> None:
    top, _ = plant_all(tmp_path)
    (top / "top.txt").write_text("the round's work\n")
    done = commit_round(top, "round one", 1, "run-1")
    assert done.sha
    assert done.nested == ("loose", "staged")
    assert git(top, "show", "--name-only", "--format=", "HEAD") == "top.txt"
    # The gitlink the round staged itself is unstaged again; the submodule's stays.
    modes = git(top, "ls-files", "--stage")
    assert "staged" not in modes and "160000" in modes


def _vendor(tmp_path: Path) -> tuple[Path, Path]:
    """A project with a nested clone of a dependency under vendor/ and a .gitattributes for
    line endings: the harmless look-alike."""
    source = make_repo(tmp_path / "dep", {"lib.py": "def f():\n    return 1\n"})
    top = make_repo(
        tmp_path / "top", {"app.py": "print(1)\n", ".gitattributes": "* text=auto eol=lf\n"}
    )
    git(top, "clone", "-q", str(source), "vendor/dep")
    baseline = tmp_path / "state" / "nested.json"
    gitrepo.record_nested(top, baseline)
    return top, baseline


def test_a_vendored_clone_is_quiet_until_its_bytes_change(tmp_path: Path) -> None:
    top, baseline = _vendor(tmp_path)
    base = gitrepo.head_sha(top)
    assert gitrepo.diff_since(top, base, baseline=baseline).empty
    before = tree_hash(top)
    (top / "vendor/dep/lib.py").write_text("def f():\n    return 'EDITED'\n")
    (top / "vendor/dep/new.py").write_text("NEW_INSIDE = 1\n")
    (top / "vendor/dep/.env").write_text("KEY=secret\n")
    diff = gitrepo.diff_since(top, base, baseline=baseline)
    assert "+    return 'EDITED'" in diff.text and "+NEW_INSIDE = 1" in diff.text
    assert "changed, was file" in diff.text and "inside a nested repository" in diff.text
    assert "secret" not in diff.text  # named like a secret: left out, as in the top tree
    assert {"vendor/dep/lib.py", "vendor/dep/new.py"} <= set(diff.files)
    assert tree_hash(top) != before
    (top / "vendor/dep/lib.py").unlink()
    assert "vendor/dep/lib.py b/vendor/dep/lib.py\n# inside" in _text(top, base, baseline)
    assert "removed, was file" in _text(top, base, baseline)


def _text(top: Path, base: str, baseline: Path) -> str:
    return gitrepo.diff_since(top, base, baseline=baseline).text


def test_a_commit_inside_a_nested_repository_is_named_by_its_head(tmp_path: Path) -> None:
    top, baseline = _vendor(tmp_path)
    old = nested.head(top / "vendor/dep")
    (top / "vendor/dep/lib.py").write_text("x = 2\n")
    git(top / "vendor/dep", "commit", "-qam", "inner")
    new = nested.head(top / "vendor/dep")
    assert len(old) == len(new) == 40 and old != new
    text = _text(top, gitrepo.head_sha(top), baseline)
    assert f"# nested repository vendor/dep/: HEAD {old} -> {new}" in text


def test_without_a_baseline_every_file_inside_is_new_and_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top, _ = _vendor(tmp_path)
    for n in range(6):
        (top / f"vendor/dep/f{n}.txt").write_text(f"file {n}\n")
    monkeypatch.setattr(inside, "NAMED_MAX", 4)
    monkeypatch.setattr("autopilot_codex.gitrepo.review.UNTRACKED_FILES_MAX", 2)
    text = _text(top, gitrepo.head_sha(top), tmp_path / "absent.json")
    assert text.count(": new\n") == 3  # HEAD's line, then three files before the bound
    assert "+file 0" in text and "(content not shown: too many new files)" in text
    assert "... and 4 more changes inside nested repositories" in text


def test_the_snapshot_and_the_digest_see_every_byte_inside(tmp_path: Path) -> None:
    top, _ = _vendor(tmp_path)
    (top / "vendor/dep/link").symlink_to("/etc/passwd")
    snap, digest = snapshot(top), tree_hash(top)
    (top / "vendor/dep/lib.py").write_text("def f():\n    return 2\n")
    assert changed_between(top, snap, snapshot(top)) == ["vendor/dep"]
    assert tree_hash(top) != digest
    assert git(top, "status", "--porcelain") == "?? vendor/"  # the user's index untouched


def test_head_is_read_from_files_only_as_a_commit_id(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    assert nested.head(folder) == ""  # no .git
    (folder / ".git").write_text("not a pointer\n")
    assert nested.head(folder) == ""
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "HEAD").write_text("ref: refs/heads/main\n")
    (secret / "commondir").write_text("../common\n")
    (tmp_path / "common/refs/heads").mkdir(parents=True)
    (folder / ".git").write_text(f"gitdir: {secret}\n")
    assert nested.head(folder) == ""  # the ref exists nowhere
    sha = hashlib.sha1(b"x").hexdigest()
    (tmp_path / "common/packed-refs").write_text(f"# pack-refs\n{sha} refs/heads/main\n")
    assert nested.head(folder) == sha
    (tmp_path / "common/refs/heads/main").write_text("the key file's first line\n")
    assert nested.head(folder) == ""  # never anything but a commit id
    (secret / "HEAD").write_text("ref: refs/../../key\n")
    assert nested.head(folder) == ""
    (secret / "HEAD").unlink()
    (secret / "HEAD").symlink_to(tmp_path / "common/packed-refs")
    assert nested.head(folder) == ""  # a link is not read


def test_a_damaged_baseline_reads_as_none(tmp_path: Path) -> None:
    file = tmp_path / "nested.json"
    bad = ('{"files": {}, "ignored": {"a": [1]}}', '{"files": {}, "ignored": {"a": 1}}')
    for text in ("{", '{"files": {"a": [1]}}', '{"files": []}', "[]", *bad):
        file.write_text(text)
        assert nested.load(file) is None
    assert nested.load(tmp_path / "absent.json") is None


def test_links_folders_special_files_and_gone_repositories_inside(tmp_path: Path) -> None:
    top, baseline = _vendor(tmp_path)
    inner = top / "vendor/dep"
    (inner / "pkg").mkdir()
    (inner / "pkg/mod.py").write_text("DEEP = 1\n")
    (inner / "up").symlink_to("../../app.py")
    os.mkfifo(inner / "pipe")  # described, never opened: reading one would block
    base = gitrepo.head_sha(top)
    text = _text(top, base, baseline)
    assert "+DEEP = 1" in text and "+../../app.py" in text and "vendor/dep/pipe" in text
    gitrepo.record_nested(top, baseline)
    (inner / "up").unlink()
    (inner / "up").symlink_to("elsewhere")
    assert "changed, was a link to '../../app.py'" in _text(top, base, baseline)
    shutil.rmtree(inner)
    text = _text(top, base, baseline)
    assert f"# nested repository vendor/dep/: HEAD {nested.head(tmp_path / 'dep')} -> none" in text
    assert "b/vendor/dep/pkg/mod.py\n# inside a nested repository" in text
    assert "git never runs in it): removed, was file, 9 bytes" in text


def test_a_symbolic_ref_loop_reads_as_no_head(tmp_path: Path) -> None:
    folder = make_repo(tmp_path / "r")
    (folder / ".git/HEAD").write_text("ref: refs/heads/a\n")
    (folder / ".git/refs/heads/a").write_text("ref: refs/heads/b\n")
    (folder / ".git/refs/heads/b").write_text("ref: refs/heads/a\n")
    assert nested.head(folder) == ""


def test_files_that_cannot_be_read_are_named_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "r"
    (root / "n/sub").mkdir(parents=True)
    (root / "n/sub/f").write_text("f\n")
    (root / "n/file").write_text("x\n")
    (root / "n/link").symlink_to("file")
    (root / "n/gone").write_text("g\n")
    real_scandir, real_open = os.scandir, os.open

    class Entry:
        def __init__(self, entry: os.DirEntry[str]) -> None:
            self.name, self._entry = entry.name, entry

        def is_dir(self, *, follow_symlinks: bool = True) -> bool:
            return self._entry.is_dir(follow_symlinks=follow_symlinks)

        def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
            if self.name == "gone":
                raise FileNotFoundError(2, "vanished")
            return self._entry.stat(follow_symlinks=follow_symlinks)

    class Listing:
        def __init__(self, fd: int) -> None:
            self._it = real_scandir(fd)

        def __enter__(self) -> list[Entry]:
            return [Entry(e) for e in self._it]

        def __exit__(self, *_: object) -> None:
            self._it.close()

    def refuse_open(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path in ("file", "sub"):  # the file, and the folder `sub`, each opened by name
            raise PermissionError(13, "denied")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def refuse_readlink(path: str, *, dir_fd: int | None = None) -> str:
        raise OSError(5, "io")

    monkeypatch.setattr(os, "scandir", Listing)
    monkeypatch.setattr(os, "open", refuse_open)
    monkeypatch.setattr(os, "readlink", refuse_readlink)
    found = nested.scan(root, "n")
    assert sorted(found) == ["n/file", "n/link"]  # the folder denied, the vanished file gone
    assert found["n/file"][6] == "unreadable 13" and found["n/link"][6] == "unreadable 5"


def test_the_review_names_what_a_nested_config_would_run_read_as_text(tmp_path: Path) -> None:
    top, markers = plant_all(tmp_path)
    found = [f.line() for f in _review(top).findings if f.kind == "nested"]
    for repo in ("loose", "staged", "sub"):
        keys = {line.split()[2].rstrip(":").lower() for line in found if f" {repo}/ " in line}
        assert {k.lower() for k, _ in KEYS} | {"include.path", "core.hookspath"} <= keys
        assert {f"hooks/{h}" for h in HOOKS} <= keys
    assert ran(markers) == []


def test_a_vendored_clone_has_no_findings_and_config_text_is_read_plainly(
    tmp_path: Path,
) -> None:
    top, baseline = _vendor(tmp_path)
    assert gitrepo.diff_since(top, gitrepo.head_sha(top), baseline=baseline).findings == ()
    text = (
        "; a comment\nstray = before any section\n[Core]\n\tPager = less\n"
        '[filter "A b"] clean = x\n[diff.old]\n\ttextconv = "y"\n# done\n'
    )
    assert tamper._config_text(text) == [
        ("core.pager", "less"),
        ("filter.A b.clean", "x"),
        ("diff.old.textconv", "y"),
    ]
    empty = tmp_path / "uninitialised"
    empty.mkdir()
    (empty / ".git").mkdir()  # no hooks folder, no config
    assert tamper.nested_findings(tmp_path, ["uninitialised", "absent"]) == []


def test_a_nested_repository_passed_over_does_not_end_the_reading_of_the_next(
    tmp_path: Path,
) -> None:
    """One without a git directory, one whose `.git` file names a folder outside the work
    tree: each is passed over, and the repository after them is still read."""
    top = tmp_path / "top"
    (top / "absent").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "hooks").mkdir(parents=True)
    (elsewhere / "config").write_text("[core]\n\tfsmonitor = /bin/evil\n")
    (top / "outside").mkdir()
    (top / "outside" / ".git").write_text(f"gitdir: {elsewhere}\n")
    (top / "planted" / ".git").mkdir(parents=True)
    (top / "planted" / ".git" / "config").write_text("[core]\n\tfsmonitor = /bin/evil\n")
    lines = [f.line() for f in tamper.nested_findings(top, ["absent", "outside", "planted"])]
    assert [line.split()[1] for line in lines] == ["outside/", "planted/"]
    assert lines[0].endswith("outside the work tree: not read")
    assert "core.fsmonitor: runs '/bin/evil'" in lines[1]
