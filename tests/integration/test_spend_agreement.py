"""One loop's spend, the same figure in every view (issue 36): `status`, `status --json`,
`loops`, `loops --json`, `watch --json`, `logs`, the report and the hooks' messages, one loop
per style. Each view once showed its own figure: `watch` the manager's alone, the report's
chart the manager's alone, a hook "$0.00" where `status` said "<$0.01"."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.spend import Spend, usd
from tests.conftest import cli, payload, plan_body, run_hook_inproc, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.integration.test_budget_meters import spend as spend_in
from tests.integration.test_report import build, parse
from tests.integration.test_rounds_driver import EXIT, READY, Script, drive

Capsys = pytest.CaptureFixture[str]


def views(repo: Path, capsys: Capsys, tmp_path: Path) -> dict[str, Any]:
    """The spend as each view shows it."""
    shown: dict[str, Any] = {}
    shown["status"] = cli(capsys, "-C", str(repo), "status")[1]
    shown["status --json"] = json.loads(cli(capsys, "-C", str(repo), "status", "--json")[1])[
        "spend"
    ]
    shown["loops"] = cli(capsys, "-C", str(repo), "loops")[1]
    (loop,) = json.loads(cli(capsys, "-C", str(repo), "loops", "--json")[1])
    shown["loops --json"] = loop["spend"]
    (row,) = json.loads(cli(capsys, "-C", str(repo), "watch", "--json", "--once")[1])
    shown["watch --json"] = row
    shown["logs"] = cli(capsys, "-C", str(repo), "logs")[1]
    html, said = build(repo, capsys, tmp_path)
    shown["report"] = " ".join(" ".join(parse(html).text).split())
    shown["report line"] = said
    return shown


def agree(shown: dict[str, Any], spent: Spend) -> None:
    """Every view shows `spent`: both meters and the total, to the cent, formatted alike."""
    line = spent.text()
    assert line in shown["status"], shown["status"]
    for key in ("status --json", "loops --json"):
        assert shown[key]["text"] == line, (key, shown[key])
        assert shown[key]["total_usd"] == pytest.approx(spent.total, abs=1e-6)
        assert shown[key]["manager_usd"] == pytest.approx(spent.manager, abs=1e-6)
    assert shown["watch --json"]["spend"]["text"] == line
    assert shown["watch --json"]["meters"]["spend"] == line
    assert spent.short() in shown["loops"]
    assert f"Spent: {line}" in shown["logs"]
    assert f"({spent.total_text()} spent" in shown["report line"]
    page = shown["report"]
    assert f"Manager {usd(spent.manager)}" in page, page
    assert f"{spent.implementer_name.capitalize()} {usd(spent.implementer)}" in page
    assert f"Total {spent.total_text()}" in page
    # The chart names both meters and ends at the same figures.
    assert "The chart's numbers" in page
    assert page.count(usd(spent.total)) >= 2  # the summary and the chart's last row


def test_an_autopilot_loop_shows_one_figure_everywhere(
    repo: Path,
    manager: FakeOpenAI,
    capsys: Capsys,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(
        capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "--budget", "1", "goal"
    )
    assert code == 0, out
    transcript = tmp_path / "session.jsonl"
    spend_in(transcript, "m1", 40_000)  # $0.60 of Sonnet 4's output
    run_hook_inproc(
        "PostToolUse",
        payload(
            "PostToolUse",
            repo,
            tool_name="Bash",
            tool_input={"command": "ls"},
            transcript_path=str(transcript),
        ),
        capsys,
        monkeypatch,
    )
    state = json.loads(cli(capsys, "-C", str(repo), "status", "--json")[1])
    spent = Spend(state["budget_used_usd"], state["implementer_used_usd"], 1.0)
    assert spent.implementer == pytest.approx(0.60) and spent.manager > 0
    agree(views(repo, capsys, tmp_path), spent)
    # The hook that ends the loop at its cap says the same figure in its closing line.
    spend_in(transcript, "m2", 40_000)  # $1.20: past the $1 budget
    ended = run_hook_inproc(
        "Stop",
        payload("Stop", repo, last_assistant_message="Working.", transcript_path=str(transcript)),
        capsys,
        monkeypatch,
    )
    state = json.loads(cli(capsys, "-C", str(repo), "status", "--json")[1])
    assert state["status"] == "stopped_budget"
    after = Spend(state["budget_used_usd"], state["implementer_used_usd"], 1.0)
    assert f"Spent: {after.text()}" in ended.stdout, ended.stdout
    agree(views(repo, capsys, tmp_path), after)


def test_a_ralph_loop_shows_one_figure_everywhere(
    repo: Path, capsys: Capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = cli(
        capsys,
        "-C",
        str(repo),
        "ralph",
        "--session-id",
        "sess-1",
        "--max-iterations",
        "5",
        "--budget",
        "2",
        "Make",
        "it",
        "pass.",
    )
    assert code == 0, out
    transcript = tmp_path / "session.jsonl"
    spend_in(transcript, "m1", 300)  # $0.0045: under a cent, never "$0.00"
    answer = run_hook_inproc(
        "Stop",
        payload("Stop", repo, last_assistant_message="Working.", transcript_path=str(transcript)),
        capsys,
        monkeypatch,
    )
    spent = Spend(0.0, 0.0045, 2.0)
    assert f"{spent.total_text()} spent" in answer.stdout, answer.stdout
    assert "<$0.01 of $2.00" in answer.stdout
    agree(views(repo, capsys, tmp_path), spent)


def test_a_rounds_run_shows_one_figure_everywhere(
    repo: Path, script: Script, manager: FakeOpenAI, capsys: Capsys, tmp_path: Path
) -> None:
    script([READY, EXIT])
    manager.enqueue(
        Reply(body=verdict_body("done"), input_tokens=100_000, output_tokens=200), schema="Verdict"
    )
    code, record = drive(repo, "--manager", "openai", "--budget", "3")
    assert code == 0, record
    spent = Spend(record["manager_usd"], record["rounds_usd"], 3.0, implementer_name="rounds")
    assert spent.manager == pytest.approx(0.202) and spent.implementer == pytest.approx(0.02)
    agree(views(repo, capsys, tmp_path), spent)


def test_an_ended_loops_time_stops_at_its_end(
    repo: Path, capsys: Capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loop that ran seconds once showed 14m37s a quarter of an hour later: its clock ran on."""
    from autopilot_codex import meters
    from tests.integration.test_ralph import PROMISE

    code, out = cli(
        capsys,
        "-C",
        str(repo),
        "ralph",
        "--session-id",
        "sess-1",
        "--max-duration",
        "1h",
        "--completion-promise",
        "ALL GREEN",
        "Make",
        "it",
        "pass.",
    )
    assert code == 0, out
    ended = run_hook_inproc(
        "Stop",
        payload("Stop", repo, last_assistant_message=f"Done.\n{PROMISE}"),
        capsys,
        monkeypatch,
    )
    assert "ralph done" in ended.stdout, ended.stdout
    later = meters.clock() + 15 * 60
    monkeypatch.setattr(meters, "clock", lambda: later)
    text = cli(capsys, "-C", str(repo), "status")[1]
    (line,) = [x for x in text.splitlines() if x.startswith("Tokens:")]
    assert re.fullmatch(r"Tokens: 0 · time \d{1,2}s / 1h", line), line
