"""The words a finished loop ends with (issue 36, "Words and edges"): one round is "1 round",
one file "1 file"; a figure priced by rule carries its "~" in `run`'s lines as in `status`;
no budget, no "of $X". Each through the real command's output."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main as cli_main
from autopilot_codex.commands.run import main
from autopilot_codex.rounds.view import LiveView
from tests.conftest import cli, payload, plan_body, run_hook_inproc, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_report import build, parse
from tests.integration.test_rounds_driver import EXIT, READY, Script

# The rounds' autouse fixtures: no back-off sleep, a Codex home of the test's own.
from tests.integration.test_rounds_spend import codex_home, no_backoff  # noqa: F401
from tests.unit.test_rounds_view import Terminal, record


def plain_run(repo: Path, *args: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = main(["add the greeting files", "--cwd", str(repo), *args], stdout=out)
    return code, out.getvalue().splitlines()


def status_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert cli_main(["-C", str(repo), "status", "--json"]) == 0
    spend = json.loads(capsys.readouterr().out)["spend"]
    assert isinstance(spend, dict)
    return spend


def test_one_round_and_one_file_are_singular(repo: Path, script: Script) -> None:
    script([READY])
    code, lines = plain_run(repo, "--implementer", "claude", "--rounds", "1")
    assert code == 2, lines
    assert any(
        line.startswith("round 1 implement: ok, ready, 1 file changed, ") for line in lines
    ), lines
    assert lines[0].startswith("1 round at most; handoff file "), lines[0]
    assert " after 1 round; handoff " in lines[-1], lines[-1]


def test_runs_closing_line_marks_an_estimate_as_status_does(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex rounds of a model the run cannot name are priced by rule: `status` said
    "~$0.03", `run`'s own closing line "$0.03"."""
    script([READY, EXIT])
    code, lines = plain_run(repo, "--implementer", "codex")
    assert code == 0, lines
    spend = status_json(repo, capsys)
    assert spend["estimated"] == ["codex's default model"]
    assert str(spend["text"]).startswith("manager $0.00 · rounds ~$0.03 · total ~$0.03")
    assert f"Spent: {spend['text']}; see what it did" in lines[-1], lines[-1]
    # The running total each round prints is the same estimate.
    ended = [line for line in lines if line.startswith("round 2 verify: ok")]
    assert ended and "~$0.03 so far" in ended[0], lines


def test_runs_closing_line_without_a_budget_names_none(repo: Path, script: Script) -> None:
    script([READY, EXIT])
    code, lines = plain_run(repo, "--implementer", "claude")
    assert code == 0, lines
    assert " of $" not in lines[-1], lines[-1]


def test_the_live_panel_marks_an_estimate_once_a_round_was_priced_by_rule() -> None:
    view = LiveView(Terminal())
    view.round_started(1, 3, "implement", 1)
    view.round_ended(dataclasses.replace(record(), unpriced="codex's default model"), 0.5, "")
    view.round_started(2, 3, "verify", 1)
    assert "~$0.50 so far" in str(view._render())
    view.round_ended(record(), 0.6, "")
    assert "~$0.60 so far" in str(view._render())
    view.close()


# -- an autopilot loop the manager called done ---------------------------------------------------


def stops(
    repo: Path, count: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """`count` Stops of a turn that committed nothing: each hook's message."""
    said = []
    for _ in range(count):
        run = run_hook_inproc(
            "Stop", payload("Stop", repo, last_assistant_message="Working."), capsys, monkeypatch
        )
        answer: dict[str, Any] = json.loads(run.stdout)
        said.append(str(answer.get("systemMessage") or answer.get("reason")))
    return said


def every_view(repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    """What `status`, `loops`, `watch --once`, `logs` and the report say, together."""
    shown = [
        cli(capsys, "-C", str(repo), *argv)[1]
        for argv in (["status"], ["loops"], ["watch", "--once"], ["logs"])
    ]
    html, said = build(repo, capsys, tmp_path)
    return "\n".join([*shown, said, " ".join(" ".join(parse(html).text).split())])


def plan(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], *extra: str) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", *extra, "goal")
    assert code == 0, out


def test_done_verdicts_a_red_check_overruled_are_not_called_continue_verdicts(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The manager said done three times, a red check overruled each, and the loop's story
    read "3 continue verdicts without a new commit"."""
    plan(repo, manager, capsys, "--check", "false")
    manager.enqueue(*[verdict_body("done", done=True)] * 3, schema="Verdict")
    *_, last = stops(repo, 3, capsys, monkeypatch)
    reason = "3 verdicts without a new commit, the last a done the checks overruled"
    assert f"aborted: {reason} (iteration 3/30, " in last, last
    # The sentence ends before the next one starts.
    assert "of $5.00). The safety rails stay on until the user runs autopilot-codex stop." in last
    shown = every_view(repo, capsys, tmp_path)
    assert f"Stop reason: {reason}" in shown
    assert "continue verdicts" not in shown


def test_a_loop_that_ended_done_tells_no_streak_and_plans_one_task(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan(repo, manager, capsys)
    manager.enqueue(
        verdict_body("continue"),
        verdict_body("continue"),
        verdict_body("done", done=True),
        schema="Verdict",
    )
    *_, last = stops(repo, 3, capsys, monkeypatch)
    assert "done: verdict says done (iteration 3/30, $0.02 of $5.00). Spent: " in last, last
    shown = every_view(repo, capsys, tmp_path)
    assert "verdicts without" not in shown
    assert "planned 1 task:" in shown  # the report's timeline said "planned 1 tasks"


def test_a_ralph_loop_at_its_limit_ends_its_sentence_and_names_no_budget(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    code, out = cli(
        capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "--max-iterations", "1", "Go."
    )
    assert code == 0, out
    assert "the loop runs 1 iteration." in out
    (said,) = stops(repo, 1, capsys, monkeypatch)
    assert "iteration limit 1 reached. The safety rails stay on until the user runs" in said, said
    # No budget was given: no view says "of $0.00" (a ralph loop keeps 0 for none).
    shown = every_view(repo, capsys, tmp_path)
    assert "Spend: manager $0.00 · implementer $0.00 · total $0.00 (no budget)" in shown
    assert "of $0.00" not in shown + said
    assert "after 1 iteration in" in shown
    # The story is told in words, not as the hook's prefixed message.
    assert "Stop reason: ralph stopped: iteration limit 1 reached" in shown
    assert "Outcome ralph stopped: iteration limit 1 reached" in shown


def test_watch_counts_a_runs_rounds_not_its_held_iterations(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """`watch` showed "iterations 0/3" for a run whose `status` said "Rounds: 2/3"."""
    script([READY, EXIT])
    code, lines = plain_run(repo, "--implementer", "claude", "--rounds", "3")
    assert code == 0, lines
    capsys.readouterr()
    assert cli_main(["-C", str(repo), "watch", "--once", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["meters"]["rounds"] == "2/3"
    assert "iterations" not in row["meters"]


def test_an_implementer_model_priced_by_rule_is_marked_an_estimate_in_every_view(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 36 ("Spend"): a model the table lacks is priced by a stated rule and shown as
    estimated in every view, not in `status` alone."""
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
        "100",
        "Go.",
    )
    assert code == 0, out
    transcript = tmp_path / "session.jsonl"
    record = {
        "type": "assistant",
        "message": {"id": "x", "model": "claude-next-1", "usage": {"output_tokens": 1000}},
    }
    transcript.write_text(json.dumps(record) + "\n")
    run = run_hook_inproc(
        "Stop",
        payload("Stop", repo, last_assistant_message="Working.", transcript_path=str(transcript)),
        capsys,
        monkeypatch,
    )
    # 1000 output tokens at the dearest row's $75 per million.
    assert "~$0.07 of $100.00 spent" in run.stdout, run.stdout
    views = {
        name: cli(capsys, "-C", str(repo), *argv)[1]
        for name, argv in {
            "status": ["status"],
            "loops": ["loops"],
            "watch": ["watch", "--once"],
            "logs": ["logs"],
        }.items()
    }
    html, views["report line"] = build(repo, capsys, tmp_path)
    views["report"] = " ".join(" ".join(parse(html).text).split())
    unmarked = [name for name, text in views.items() if "~$0.07" not in text]
    assert not unmarked, {name: views[name] for name in unmarked}
