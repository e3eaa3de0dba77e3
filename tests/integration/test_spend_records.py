"""The implementer's spend read from every record the host keeps of the session, through the real
hook path: Codex's rollout, Claude Code's subagent records, and a record the implementer edits
under the reader (noticed, recorded, and never lowering the meter)."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import HookRun, payload, state_of

Capsys = pytest.CaptureFixture[str]


def hook(
    event: str, data: dict[str, Any], capsys: Capsys, monkeypatch: pytest.MonkeyPatch, host: str
) -> HookRun:
    from autopilot_codex.__main__ import run

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(data).encode())))
    monkeypatch.setattr(sys, "argv", ["autopilot-codex", "hook", event, "--host", host])
    capsys.readouterr()
    code = run()
    out = capsys.readouterr()
    return HookRun(code, out.out, out.err)


def ralph(capsys: Capsys, repo: Path, *extra: str) -> None:
    capsys.readouterr()
    code = main(["-C", str(repo), "ralph", "--session-id", "sess-1", *extra, "Make", "it", "pass."])
    assert code == 0, capsys.readouterr()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def claude_message(record: Path, message_id: str, output_tokens: int) -> None:
    """One Sonnet 4 message ($15 per million output tokens)."""
    line = {
        "type": "assistant",
        "timestamp": now(),
        "message": {
            "id": message_id,
            "model": "claude-sonnet-4-5",
            "usage": {"input_tokens": 0, "output_tokens": output_tokens},
        },
    }
    record.parent.mkdir(parents=True, exist_ok=True)
    with record.open("a") as handle:
        handle.write(json.dumps(line) + "\n")


def events(repo: Path) -> list[dict[str, Any]]:
    text = (project_dir(repo) / "events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# -- Claude Code: subagents and background tasks -----------------------------------------------


def test_subagents_and_background_tasks_spend_from_the_ralph_budget(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "0.50")
    transcript = tmp_path / "projects" / "sess-1.jsonl"
    subagents = tmp_path / "projects" / "sess-1" / "subagents"
    claude_message(transcript, "m1", 10_000)  # $0.15
    claude_message(subagents / "agent-a1.jsonl", "s1", 10_000)  # $0.15, a foreground subagent
    (subagents / "agent-a1.meta.json").write_text('{"usage": {"output_tokens": 9999999}}')
    stop = payload("Stop", repo, transcript_path=str(transcript))
    assert hook("Stop", stop, capsys, monkeypatch, "claude").json.get("decision") == "block"
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(0.30)
    # A background task goes on writing after the Stop; the next look counts only what is new.
    claude_message(subagents / "agent-b2.jsonl", "s2", 15_000)  # $0.225
    stop = dict(stop, stop_hook_active=True)
    hook("Stop", stop, capsys, monkeypatch, "claude")
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(0.525)
    assert state["status"] == "stopped_budget"
    cursors = {Path(c["path"]).name: c["offset"] for c in state["spend_cursors"]}
    assert set(cursors) == {"sess-1.jsonl", "agent-a1.jsonl", "agent-b2.jsonl"}


def test_a_transcript_the_implementer_rewrites_never_lowers_the_meter(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The attack: with its file tools the implementer rewrites its own transcript, lowering
    the usage of messages already read and cutting the file short. The spend counted stays
    counted, and the ledger says the record was tampered with."""
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "5")
    transcript = tmp_path / "sess-1.jsonl"
    for n in range(3):
        claude_message(transcript, f"m{n}", 20_000)  # $0.30 each
    stop = payload("Stop", repo, transcript_path=str(transcript))
    hook("Stop", stop, capsys, monkeypatch, "claude")
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(0.90)
    text = transcript.read_text()
    transcript.write_text(text.replace('"output_tokens": 20000', '"output_tokens": 1    '))
    claude_message(transcript, "m3", 20_000)
    hook("Stop", dict(stop, stop_hook_active=True), capsys, monkeypatch, "claude")
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(1.20)
    transcript.write_text("")
    hook("Stop", dict(stop, stop_hook_active=True), capsys, monkeypatch, "claude")
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(1.20)
    found = [e for e in events(repo) if e["event"] == "spend.tampered"]
    assert [e["why"].split(" (")[0] for e in found] == [
        "rewritten before the point already read",
        "cut short",
    ]
    assert all(e["record"] == str(transcript) for e in found)
    capsys.readouterr()
    assert main(["-C", str(repo), "status"]) == 0
    shown = capsys.readouterr().out
    assert f"{transcript} was found tampered with (cut short" in shown, shown


# -- Codex: the session rollout ------------------------------------------------------------------


def rollout_lines(total_input: int, total_output: int, last_output: int) -> str:
    """A turn's context (gpt-5.5: $5 in, $0.50 cached, $30 out per million) and its count."""
    context = {"timestamp": now(), "type": "turn_context", "payload": {"model": "gpt-5.5"}}
    total = {"input_tokens": total_input, "cached_input_tokens": 0, "output_tokens": total_output}
    last = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": last_output}
    count = {
        "timestamp": now(),
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {"total_token_usage": total, "last_token_usage": last},
        },
    }
    return json.dumps(context) + "\n" + json.dumps(count) + "\n"


def test_a_codex_ralph_budget_is_spent_from_the_rollout(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--host", "codex", "--max-iterations", "0", "--budget", "0.50")
    rollout = tmp_path / "sessions" / "rollout-x.jsonl"
    rollout.parent.mkdir()
    rollout.write_text(rollout_lines(20_000, 5_000, 5_000))  # $0.10 + $0.15
    stop = payload("Stop", repo, transcript_path=str(rollout), model="gpt-5.5", turn_id="t1")
    assert hook("Stop", stop, capsys, monkeypatch, "codex").json.get("decision") == "block"
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(0.25)
    assert state["implementer_tokens"] == 25_000
    # The totals rise by 10,000 output tokens: $0.30 more, $0.55 in all.
    with rollout.open("a") as handle:
        handle.write(rollout_lines(20_000, 15_000, 10_000))
    hook("Stop", dict(stop, stop_hook_active=True), capsys, monkeypatch, "codex")
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(0.55)
    assert state["status"] == "stopped_budget"
    assert "implementer spend" in state["stop_reason"]
    assert state["budget_used_usd"] == 0.0
