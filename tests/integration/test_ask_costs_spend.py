"""`ask --costs` is what the consultation skill sends the implementer to before it spends: its
budget line must be the loop's one figure (`spend.py`), the implementer's spend with the
manager's. It counted the manager's alone, so an implementer that had spent most of the
budget read that nearly all of it was left."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import edit_payload
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_spend_records import Capsys, claude_message, hook
from tests.reliability.conftest import start_loop


def test_the_budget_line_counts_the_implementers_spend(
    repo: Path,
    manager: FakeOpenAI,
    capsys: Capsys,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    start_loop(repo, manager, capsys, "--budget", "5.00", "--review", "off")
    transcript = tmp_path / "sess-1.jsonl"
    claude_message(transcript, "m1", 100_000)  # $1.50
    data = edit_payload(repo)
    data["transcript_path"] = str(transcript)
    hook("PostToolUse", data, capsys, monkeypatch, "claude")
    capsys.readouterr()
    assert main(["-C", str(repo), "ask", "--costs"]) == 0
    out = capsys.readouterr().out
    assert "Budget: $1.50 of $5.00 used, $3.50 left;" in out, out
