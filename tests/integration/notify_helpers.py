"""Shared by the notification tests: a `notify_command` that appends its stdin to a file, the
helpers it runs in, and the real hook launcher."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.notify import MODULE
from tests.conftest import HookRun, payload, plan_body, run_launcher
from tests.fakes.openai_server import FakeOpenAI


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> None:
    code = main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.out + out.err


def notifier(home: Path, tmp_path: Path, body: str = "") -> Path:
    """A `notify_command` that appends its stdin (one JSON event) to a file."""
    told = tmp_path / "told.jsonl"
    script = tmp_path / "notifier.py"
    script.write_text(
        f"import sys\ndata = sys.stdin.read()\nwith open({str(told)!r}, 'a') as f:\n"
        f"    f.write(data)\n{body}"
    )
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"notify_command": [sys.executable, str(script)]}))
    return told


def helpers(home: Path) -> list[int]:
    """The notification helpers still running for this state home."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if MODULE.encode() in cmdline and f"AUTOPILOT_CODEX_HOME={home}".encode() in environ:
            alive.append(int(entry.name))
    return alive


def told_events(home: Path, told: Path) -> list[dict[str, Any]]:
    """Every event told, once every helper the hooks started has ended (however long)."""
    while helpers(home):
        time.sleep(0.05)
    lines = told.read_text().splitlines() if told.exists() else []
    return [json.loads(line) for line in lines]


def hook(repo: Path, event: str, env: dict[str, str] | None = None, **extra: Any) -> HookRun:
    data = payload(event, repo, **extra)
    raw = json.dumps(data).encode()
    run = run_launcher(["hook", event, "--host", "claude"], raw, repo, env)
    assert run.code == 0, run.stderr
    return run


def plan(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
