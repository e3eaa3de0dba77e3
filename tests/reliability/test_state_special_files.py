"""The loop's own files in the state home, which an unguarded implementer writes: a fifo put
at `state.json` or `events.jsonl` (or a link to an endless device) made every reader wait for
a writer for ever, so the user's `stop`, typed in another terminal to end the loop, hung, as
did `status`, `cancel` and `resume`. Each is read only as a regular file, opened without
waiting: such a file reads as damaged (the rails kept until the user's stop, which ends them).
A hang is found by a generous timeout that fails the test, not by a timing margin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir, state_home
from tests.conftest import cli

HANG_S = 60


def command(repo: Path, *verb: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "autopilot_codex", "-C", str(repo), *verb],
            capture_output=True,
            text=True,
            timeout=HANG_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(verb)}` hung on a special file in the state home")


@pytest.mark.parametrize("name", ["state.json", "events.jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_the_users_commands_never_hang_on_a_special_file_in_the_state_home(
    repo: Path, capsys: pytest.CaptureFixture[str], name: str, kind: str
) -> None:
    code, out = cli(capsys, "-C", str(repo), "ralph", "--session-id", "s1", "make", "it")
    assert code == 0, out
    path = project_dir(repo) / name
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")

    for verb in (["status", "--json"], ["status"]):
        # Read as damaged: said (and, for the state, moved aside), the rails kept.
        done = command(repo, *verb)
        assert done.returncode in (0, 1), done.stdout + done.stderr

    done = command(repo, "stop")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rails are off" in done.stdout or "loop stopped" in done.stdout, done.stdout
    for verb in (["resume"], ["cancel"], ["status"]):
        done = command(repo, *verb)
        assert done.returncode in (0, 1), done.stdout + done.stderr


@pytest.mark.parametrize("index", ["active", "rails"])
def test_a_special_file_among_the_markers_hangs_no_command_and_no_hook(
    repo: Path, capsys: pytest.CaptureFixture[str], index: str
) -> None:
    """The markers' indexes are read by every hook and every command that finds its loop."""
    code, out = cli(capsys, "-C", str(repo), "ralph", "--session-id", "s1", "make", "it")
    assert code == 0, out
    os.mkfifo(state_home() / index / "planted")
    (state_home() / index / "endless").symlink_to("/dev/zero")

    done = command(repo, "status")
    assert done.returncode == 0 and "ralph" in done.stdout, done.stdout + done.stderr
    done = command(repo, "stop")
    assert done.returncode == 0 and "loop stopped" in done.stdout, done.stdout + done.stderr


def test_a_special_file_at_the_settings_hangs_no_command(repo: Path) -> None:
    """`config.json` is read by every hook that reaches a loop and by most commands."""
    state_home().mkdir(parents=True, exist_ok=True)
    os.mkfifo(state_home() / "config.json")

    done = command(repo, "ralph", "--session-id", "s1", "make", "it")

    assert done.returncode == 1 and "config.json" in done.stdout, done.stdout + done.stderr
