"""`autopilot-codex run` with the real Claude Code CLI as the implementer (fake Anthropic API):
two fresh `claude -p` rounds with the plugin loaded. The first tries a destructive command,
which the rails deny because the run holds a driver-owned loop, then says `::potter(ready)`;
the verifier changes nothing and says `::potter(exit)`."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from .autopilot_helpers import LAUNCHER, ROOT, Autopilot
from .claude_cli import DEFAULT_MODEL, build_env, git
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e


def test_two_rounds_to_a_verified_exit(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    fake_anthropic.script = [
        [ToolUse("Bash", {"command": "git reset --hard HEAD~1"})],
        [ToolUse("Write", {"file_path": "{workdir}/hello.txt", "content": "hello\n"})],
        [ToolUse("Bash", {"command": 'git add hello.txt && git commit -q -m "add hello"'})],
        [Text("Added hello.txt.\n::potter(ready)")],
        [Text("Every requirement checked against the files.\n::potter(exit)")],
    ]
    host_args = [
        "--plugin-dir",
        str(ROOT),
        "--model",
        DEFAULT_MODEL,
        "--permission-mode",
        "bypassPermissions",
    ]
    env = build_env(
        home=home,
        tmpdir=Path(tempfile.mkdtemp(prefix="cc-e2e-")),
        anthropic_url=fake_anthropic.url,
        extra_env={
            **ap.env("http://127.0.0.1:9/v1"),
            "AUTOPILOT_CODEX_CLAUDE_CMD": str(claude_bin),
        },
    )
    base = git(git_repo, "rev-parse", "HEAD").strip()
    proc = subprocess.run(
        [
            str(LAUNCHER),
            "-C",
            str(git_repo),
            "run",
            "add",
            "hello.txt",
            "--implementer",
            "claude",
            "--rounds",
            "4",
            "--json",
            "--timeout",
            "90",
            *(f"--host-arg={a}" for a in host_args),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert (record["status"], record["rounds_used"]) == ("complete", 2)
    # The real CLI's result event reports the round's tokens (its `usage`) beside its dollars.
    assert isinstance(record["tokens"], int) and record["tokens"] > 0, record
    assert record["rounds_usd"] > 0, record

    mains = [r.raw for r in fake_anthropic.main_requests()]
    assert len(mains) == 5, fake_anthropic.dump_log()
    # The rails answered the first round's fresh session: its reset never ran.
    assert "autopilot-codex safety rail [reset-hard]" in mains[1]
    assert "[reset-hard]" not in mains[0]
    assert git(git_repo, "rev-list", "--count", f"{base}..HEAD").strip() == "1"
    assert (git_repo / "hello.txt").read_text() == "hello\n"
    assert mains[4].count("Verify the objective in the handoff file") >= 1
    # The run's loop is gone, and it ended as done.
    assert ap.active_markers() == []
    assert ap.state()["style"] == "rounds" and ap.state()["status"] == "done"
    assert not (ap.home / "logs" / "bridge.log").exists()


def test_a_rate_limited_round_waits_and_is_retried(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The API answers the first round 429: the real CLI exits 1 with its error only in its
    result event's fields; the driver waits (the doubling delay: no Retry-After reaches the
    stream) and retries, and the run completes."""
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    fake_anthropic.rate_limit_main = 1
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/hello.txt", "content": "hello\n"})],
        [Text("Added hello.txt.\n::potter(ready)")],
        [Text("Every requirement checked against the files.\n::potter(exit)")],
    ]
    env = build_env(
        home=home,
        tmpdir=Path(tempfile.mkdtemp(prefix="cc-e2e-")),
        anthropic_url=fake_anthropic.url,
        extra_env={
            **ap.env("http://127.0.0.1:9/v1"),
            "AUTOPILOT_CODEX_CLAUDE_CMD": str(claude_bin),
            # The CLI's own retries off: the 429 reaches its result event at once.
            "CLAUDE_CODE_MAX_RETRIES": "0",
        },
    )
    host_args = ["--model", DEFAULT_MODEL, "--permission-mode", "bypassPermissions"]
    proc = subprocess.run(
        [
            str(LAUNCHER),
            "-C",
            str(git_repo),
            "run",
            "add",
            "hello.txt",
            "--implementer",
            "claude",
            "--rounds",
            "4",
            "--json",
            "--timeout",
            "90",
            *(f"--host-arg={a}" for a in host_args),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["status"] == "complete"
    assert "rate limited or overloaded: waiting" in proc.stderr, proc.stderr
    assert [r.status for r in fake_anthropic.main_requests()][:2] == [429, 200]
