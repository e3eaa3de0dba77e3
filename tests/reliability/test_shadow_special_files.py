"""The shadow history reads a few of git's own files in Python (HEAD, the stash's log), and
the implementer writes `.git/logs` and `.git/HEAD` in a session: a fifo or a link to an
endless device there must not hang the snapshot's worker, which holds the shadow's lock, so
that every later snapshot, the loss the Stop names and `restore` itself would go with it."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Hook, cli, git, make_repo, payload
from tests.integration.test_shadow import bash, settle, start_loop

EDITED = b"# demo\nthe user's edit no commit holds\n"
PLANTS = {
    "fifo": "mkdir -p .git/logs/refs && mkfifo .git/logs/refs/stash",
    "endless-link": "mkdir -p .git/logs/refs && ln -s /dev/zero .git/logs/refs/stash",
}


@pytest.fixture
def unblocked(tmp_path: Path) -> Iterator[None]:
    """Whatever the test leaves blocked on a fifo it planted is let go (a writer opened and
    closed: the reader gets its end of file)."""
    yield
    for fifo in tmp_path.rglob("*"):
        with contextlib.suppress(OSError):
            if fifo.is_fifo():
                os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_special_file_in_git_s_logs_neither_hangs_the_shadow_nor_hides_a_loss(
    plant: str, tmp_path: Path, hook: Hook, capsys: pytest.CaptureFixture[str], unblocked: None
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "README.md").write_bytes(EDITED)
    start_loop(repo, capsys)
    assert hook("UserPromptSubmit", payload("UserPromptSubmit", repo, prompt="go")).code == 0

    bash(repo, hook, PLANTS[plant])
    bash(repo, hook, "git checkout HEAD -- README.md")
    settle(repo)
    stop = hook("Stop", payload("Stop", repo)).json
    told = stop.get("systemMessage", "")

    assert "work vanished" in told and "README.md" in told, stop
    snapshot = re.search(r"in snapshot (\d+)", told)
    assert snapshot is not None
    code, out = cli(capsys, "-C", str(repo), "restore", snapshot.group(1))
    assert code == 0, out
    assert (repo / "README.md").read_bytes() == EDITED
    assert git(repo, "status", "--porcelain") == "M README.md"


def test_git_s_small_files_are_read_only_as_small_regular_files(tmp_path: Path) -> None:
    """The one reader behind HEAD, the stash's log, a `.git` file, `commondir` and a nested
    repository's refs: a fifo, a device, a folder or a file past the bound is none, and does
    not wait; a link at the name is followed only when asked (HEAD)."""
    from autopilot_codex.nofollow import small

    regular = tmp_path / "HEAD"
    regular.write_bytes(b"ref: refs/heads/main\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    endless = tmp_path / "endless"
    endless.symlink_to("/dev/zero")
    linked = tmp_path / "linked"
    linked.symlink_to(regular)
    huge = tmp_path / "huge"
    with huge.open("wb") as handle:
        handle.truncate(1 << 40)  # sparse: a terabyte costs nothing on disk

    assert small(regular, 64) == b"ref: refs/heads/main\n"
    assert small(regular, 4) is None
    for path in (fifo, endless, huge, tmp_path, tmp_path / "missing"):
        assert small(path, 1 << 20) is None and small(path, 1 << 20, follow=True) is None
    assert small(linked, 64) is None
    assert small(linked, 64, follow=True) == b"ref: refs/heads/main\n"
