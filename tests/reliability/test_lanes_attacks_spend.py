"""Attack first: a lane spends past its reservation (and so the run past its budget).

The rounds driver checks its caps between rounds: a round that starts under the lane's
reservation may end far past it (one host call costs what it costs). The lanes' ledger counts
what each lane reports, so the reservations stop holding the run to its cap. Real lane
processes (the rounds driver with the stateless fake host, $0.01 a call), the fake OpenAI
server as the manager.
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


@pytest.mark.xfail(
    strict=True,
    reason="open: the rounds driver now stops a round as its streamed spend reaches the "
    "budget (tests/integration/test_rounds_spend.py), but Claude Code and Codex report a "
    "round's dollars only in its final event: such a round cannot be stopped before it ends, "
    "so a lane's round passes its reservation by what it costs (here $0.01 of $0.002 held), "
    "and the lanes' ledger (lanes/budget.py settle) takes the overshoot. Fix: hold back one "
    "round's worst cost in each reservation (start a lane, or a lane's next round, only when "
    "a round's cost fits what is left).",
)
def test_a_lane_never_spends_past_its_reservation(
    repo: Path, manager: FakeOpenAI, host: None
) -> None:
    record = _lanes(repo, manager, "0.002")
    (lane,) = record["tasks"]
    assert lane["usd"] <= 0.002
