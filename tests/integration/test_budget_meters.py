"""One budget for what the loop really spends (issue 22): the implementer's spend read from the
host's transcript at each hook, `--budget` capping manager + implementer for ralph and
autopilot, `--max-tokens` and `--max-duration`, each ending the loop with its own status."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import meters
from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from autopilot_codex.styles.autopilot import inflight
from tests.conftest import HookRun, payload, plan_body, run_hook_inproc, state_of
from tests.fakes.openai_server import FakeOpenAI

Hook = Callable[[str, dict[str, Any]], HookRun]
Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def hook(capsys: Capsys, monkeypatch: pytest.MonkeyPatch) -> Hook:
    def run(event: str, data: dict[str, Any]) -> HookRun:
        return run_hook_inproc(event, data, capsys, monkeypatch)

    return run


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def spend(transcript: Path, message_id: str, output_tokens: int) -> None:
    """Append one assistant message of Sonnet 4 ($15 per million output tokens), written on
    two lines as Claude Code writes a message of two content blocks."""
    record = {
        "type": "assistant",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {
            "id": message_id,
            "model": "claude-sonnet-4-5-20250929",
            "usage": {"input_tokens": 0, "output_tokens": output_tokens},
        },
    }
    with transcript.open("a") as handle:
        handle.write((json.dumps(record) + "\n") * 2)


def stop(hook: Hook, repo: Path, transcript: Path, **extra: Any) -> HookRun:
    return hook(
        "Stop",
        payload(
            "Stop",
            repo,
            last_assistant_message="Working.",
            transcript_path=str(transcript),
            **extra,
        ),
    )


def ralph(capsys: Capsys, repo: Path, *extra: str) -> None:
    code, out = cli(
        capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", *extra, "Make", "it", "pass."
    )
    assert code == 0, out


# -- ralph: no manager, and still a budget --------------------------------------------------


def test_a_ralph_budget_is_charged_the_implementers_spend_and_stops_naming_it(
    repo: Path, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "0.50")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 20_000)  # $0.30
    assert stop(hook, repo, transcript).json.get("decision") == "block"
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(0.30)
    spend(transcript, "m2", 20_000)  # $0.60 in all: over the $0.50
    answer = stop(hook, repo, transcript, stop_hook_active=True)
    assert answer.json.get("decision") != "block"
    state = state_of(repo)
    assert state["status"] == "stopped_budget"
    assert "implementer spend" in state["stop_reason"]
    assert state["implementer_used_usd"] == pytest.approx(0.60)
    assert state["budget_used_usd"] == 0.0
    assert state["implementer_tokens"] == 40_000
    assert json.loads((project_dir(repo) / "last.json").read_text())["why"] == "budget"
    assert "$0.60" in answer.json.get("systemMessage", "")


def test_a_ralph_loop_without_a_budget_is_not_stopped_by_spend(
    repo: Path, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "5")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 1_000_000)  # $15, more than any default budget
    assert stop(hook, repo, transcript).json.get("decision") == "block"
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(15.0)


def test_a_ralph_token_cap_stops_as_stopped_tokens(
    repo: Path, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-tokens", "1000")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 1500)
    stop(hook, repo, transcript)
    state = state_of(repo)
    assert state["status"] == "stopped_tokens"
    assert "1500 of 1000 tokens" in state["stop_reason"]


def test_a_ralph_time_cap_stops_as_stopped_duration(
    repo: Path, capsys: Capsys, hook: Hook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = 1_800_000_000.0
    monkeypatch.setattr(meters, "clock", lambda: start)
    ralph(capsys, repo, "--max-duration", "2h")
    transcript = tmp_path / "session.jsonl"
    monkeypatch.setattr(meters, "clock", lambda: start + 2 * 3600 - 1)
    assert stop(hook, repo, transcript).json.get("decision") == "block"
    monkeypatch.setattr(meters, "clock", lambda: start + 2 * 3600)
    stop(hook, repo, transcript, stop_hook_active=True)
    assert state_of(repo)["status"] == "stopped_duration"


def test_a_bad_duration_is_refused(repo: Path, capsys: Capsys) -> None:
    code, out = cli(capsys, "-C", str(repo), "ralph", "--max-duration", "soon", "x")
    assert code != 0 and "--max-duration soon is not accepted" in out


# -- autopilot: the total is manager + implementer -------------------------------------------


def plan(capsys: Capsys, repo: Path, manager: FakeOpenAI, *extra: str) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", *extra, "goal")
    assert code == 0, out


def test_an_autopilot_total_includes_the_implementer_and_stops_without_a_call(
    repo: Path, manager: FakeOpenAI, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    plan(capsys, repo, manager, "--budget", "1")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 40_000)  # $0.60
    hook(
        "PostToolUse",
        payload(
            "PostToolUse",
            repo,
            tool_name="Bash",
            tool_input={"command": "ls"},
            transcript_path=str(transcript),
        ),
    )
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(0.60)
    code, out = cli(capsys, "-C", str(repo), "status")
    assert "implementer $0.60" in out and "total $0.6" in out
    spend(transcript, "m2", 40_000)  # $1.20 of implementer spend alone
    calls = len(manager.requests)
    stop(hook, repo, transcript)
    state = state_of(repo)
    assert state["status"] == "stopped_budget"
    assert "implementer spend" in state["stop_reason"]
    assert len(manager.requests) == calls  # the cap is checked before any manager call


def test_an_autopilot_time_cap_reads_the_clock_it_is_given(
    repo: Path,
    manager: FakeOpenAI,
    capsys: Capsys,
    hook: Hook,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan(capsys, repo, manager, "--max-duration", "90m")
    started = state_of(repo)["started_epoch"]
    monkeypatch.setattr(inflight, "clock", lambda: started + 90 * 60)
    stop(hook, repo, tmp_path / "none.jsonl")
    state = state_of(repo)
    assert state["status"] == "stopped_duration"
    assert "1h30m" in state["stop_reason"]
    # A raise resumes the same loop; without one, resume says which cap to raise.
    monkeypatch.setattr(meters, "clock", lambda: started + 90 * 60)
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code != 0 and "--max-duration TIME" in out
    code, out = cli(capsys, "-C", str(repo), "resume", "--max-duration", "3h")
    assert code == 0, out
    state = state_of(repo)
    assert state["status"] == "running" and state["max_seconds"] == 3 * 3600


def test_the_users_own_prices_come_first(
    repo: Path, capsys: Capsys, hook: Hook, tmp_path: Path, isolated: Path
) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "config.json").write_text(
        json.dumps({"implementer_prices": {"": {"input": 0, "output": 0}}})
    )
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "0.50")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 1_000_000)
    assert stop(hook, repo, transcript).json.get("decision") == "block"
    state = state_of(repo)
    assert state["implementer_used_usd"] == 0.0 and state["implementer_tokens"] == 1_000_000


def test_status_names_a_model_priced_at_the_dearest_row(
    repo: Path, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "5", "--budget", "100")
    transcript = tmp_path / "session.jsonl"
    record = {
        "type": "assistant",
        "message": {"id": "x", "model": "claude-next-1", "usage": {"output_tokens": 1000}},
    }
    transcript.write_text(json.dumps(record) + "\n")
    stop(hook, repo, transcript)
    code, out = cli(capsys, "-C", str(repo), "status")
    assert "Priced at the dearest row (not in the price table): claude-next-1" in out
    # 1000 output tokens at $75 per million, marked an estimate in the figure itself.
    assert "implementer ~$0.07" in out and "estimated: claude-next-1 priced by rule" in out
    assert "of $100.00" in out


def test_two_transcripts_each_resume_from_their_own_offset(
    repo: Path, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "9", "--budget", "100")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    spend(first, "a1", 1000)
    spend(second, "b1", 1000)
    for path in (first, second, first, second):
        stop(hook, repo, path, stop_hook_active=True)
    assert state_of(repo)["implementer_tokens"] == 2000  # each message once
