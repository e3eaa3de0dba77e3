"""Attack first: a lane spends past its reservation (and so the run past its budget).

The rounds driver checks its caps between rounds: a round that starts under the lane's
reservation could end far past it (one host call costs what it costs), and the lanes' ledger
counts what each lane reports. Claude Code reports a round's dollars only in its final event,
so the rounds runner watches an estimate of its spend from each streamed message's usage and
ends the round as that reaches the reservation (past it by at most one message). Real lane
processes (the rounds driver with the stateless fake host, $0.01 a call, streaming messages of
$0.001 each), the fake OpenAI server as the manager.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.commands.run import main
from tests.conftest import ROOT, review_body, task
from tests.fakes.openai_server import FakeOpenAI

LANE_HOST = ROOT / "tests" / "fakes" / "lane_host.py"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(LANE_HOST))}"
    monkeypatch.setenv("AUTOPILOT_CODEX_CLAUDE_CMD", command)
    monkeypatch.setenv("LANE_HOST_LOG", str(tmp_path / "lanes.log"))
    # Each call streams five messages of $0.001 before its work, as Claude Code streams each
    # message's usage; its result event then says $0.01.
    monkeypatch.setenv("LANE_HOST_MESSAGES", "5")


def _lanes(repo: Path, manager: FakeOpenAI, lane_usd: str) -> dict[str, Any]:
    manager.enqueue({"summary": "lanes", "tasks": [task(1, depends_on=[])]}, schema="Plan")
    manager.enqueue(review_body("approve"), schema="Review")
    out = io.StringIO()
    argv = ["write the task files", "--implementer", "claude", "--cwd", str(repo), "--json"]
    argv += ["--manager", "openai", "--lanes", "1", "--budget", "1", "--lane-budget", lane_usd]
    main(argv, stdout=out)
    record: dict[str, Any] = json.loads(out.getvalue())
    return record


def test_control_a_lane_within_its_reservation_merges(
    repo: Path, manager: FakeOpenAI, host: None
) -> None:
    record = _lanes(repo, manager, "0.5")
    (lane,) = record["tasks"]
    assert lane["state"] == "merged" and 0 < lane["usd"] <= 0.5


def test_a_lane_never_spends_past_its_reservation(
    repo: Path, manager: FakeOpenAI, host: None
) -> None:
    """The lane's round reports its dollars ($0.01) only in its final event; its messages'
    estimate reaches the $0.002 held at the second message, and the round is ended there."""
    record = _lanes(repo, manager, "0.002")
    (lane,) = record["tasks"]
    assert 0 < lane["usd"] <= 0.002
