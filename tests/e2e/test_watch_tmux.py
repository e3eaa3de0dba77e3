"""`autopilot-codex watch` in a real terminal (a detached tmux session): it shows a running
loop, and flags it once the process of its session is killed and the configured silence has
passed. The session is a stand-in that writes its transcript as a host does; every wait polls
the pane for a condition, none is a fixed sleep."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import make_repo, payload, run_launcher

from .autopilot_helpers import LAUNCHER

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

SILENCE_S = 4
# Only a failure waits this long: a passing run ends as soon as the pane shows what it must.
GIVE_UP_S = 180.0
# A host's transcript, as the stand-in session keeps writing it.
SESSION = (
    "import sys, time\n"
    "while True:\n"
    "    with open(sys.argv[1], 'a') as f:\n"
    '        f.write(\'{"type": "progress"}\\n\')\n'
    "    time.sleep(0.2)\n"
)


class Tmux:
    """A tmux server of the test's own (its socket in tmp_path)."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def pane(self, name: str) -> str:
        return self.run("capture-pane", "-p", "-J", "-t", name)

    def wait_for(self, name: str, seen: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + GIVE_UP_S
        while True:
            text = self.pane(name)
            if seen(text):
                return text
            assert time.monotonic() < deadline, f"the pane never showed it:\n{text}"
            time.sleep(0.1)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    server = Tmux(tmp_path / "tmux.sock")
    yield server
    subprocess.run(["tmux", "-S", str(server.socket), "kill-server"], capture_output=True)


def test_watch_shows_a_running_loop_and_flags_it_when_its_session_is_killed(
    isolated: Path, tmp_path: Path, tmux: Tmux
) -> None:
    repo = make_repo(tmp_path / "watched-repo")
    env = {"AUTOPILOT_CODEX_PYTHON": sys.executable}
    started = run_launcher(
        ["-C", str(repo), "ralph", "--session-id", "s1", "--max-iterations", "9", "go"], env=env
    )
    assert started.code == 0, started.stderr
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")
    session = subprocess.Popen([sys.executable, "-c", SESSION, str(transcript)])
    try:
        # The session's first tool: its hook names the transcript the loop then keeps an eye on.
        tool = payload(
            "PostToolUse",
            repo,
            "s1",
            tool_name="Bash",
            tool_input={"command": "ls"},
            transcript_path=str(transcript),
        )
        hooked = run_launcher(
            ["hook", "PostToolUse", "--host", "claude"], json.dumps(tool).encode(), repo, env
        )
        assert hooked.code == 0, hooked.stderr
        watch = " ".join(
            shlex.quote(part)
            for part in (
                "env",
                # The pane's own size, not one the test runner's environment names.
                "-u",
                "COLUMNS",
                "-u",
                "LINES",
                f"AUTOPILOT_CODEX_HOME={isolated}",
                f"AUTOPILOT_CODEX_PYTHON={sys.executable}",
                f"HOME={os.environ['HOME']}",
                str(LAUNCHER),
                "watch",
                "--silence",
                f"{SILENCE_S}s",
                "--every",
                "0.2",
            )
        )
        tmux.run("new-session", "-d", "-s", "w", "-x", "240", "-y", "40", watch)

        alive = tmux.wait_for(
            "w", lambda t: "watched-repo" in t and "running" in t and "SILENT" not in t
        )
        assert "ralph" in alive
    finally:
        session.send_signal(signal.SIGKILL)
        session.wait()
    killed_at = transcript.stat().st_mtime

    flagged = tmux.wait_for("w", lambda t: "SILENT" in t and "transcript write" in t)
    assert "watched-repo" in flagged
    assert time.time() - killed_at >= SILENCE_S
    events = [
        json.loads(line) for line in (project_dir(repo) / "events.jsonl").read_text().splitlines()
    ]
    silent = [e for e in events if e["event"] == "watch.silent"]
    assert [e["kind"] for e in silent] == ["quiet"]
    assert "transcript write" in silent[0]["reason"]
