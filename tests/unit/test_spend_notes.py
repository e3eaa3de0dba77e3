"""What cannot be seen of the implementer's spend is said: in `status` (no usage in the host's
records, a plan whose dollars are notional, a model priced at the dearest row) and in `doctor`
(each host's record, a Codex model missing from the table, no API key)."""

from __future__ import annotations

import json
from pathlib import Path

from autopilot_codex import meters
from autopilot_codex.host import SpendRead
from autopilot_codex.hosts.claude.doctor import spend_notes as claude_notes
from autopilot_codex.hosts.codex.doctor import spend_notes as codex_notes
from autopilot_codex.hosts.codex.rollout import RolloutReader
from autopilot_codex.state import SpendCursor, State, planless

START = 1_800_000_000.0


def loop(**fields: object) -> State:
    return planless(goal="g", worktree="/w", head="h", style="ralph", started_epoch=START, **fields)


def status(state: State, reads: bool = True) -> str:
    return "\n".join(meters.status_lines(state, START + 60, budget_usd=1.0, reads_spend=reads))


def test_status_says_when_tools_ran_and_no_usage_was_seen() -> None:
    assert "No usage seen in the host's records yet" in status(loop(tool_events=3))
    assert "No usage seen" not in status(loop(tool_events=3, implementer_tokens=10))
    assert "No usage seen" not in status(loop(tool_events=0))
    # A host without a reader says its own line instead.
    assert "not seen on this host" in status(loop(tool_events=3), reads=False)


def test_status_says_a_plans_dollars_are_notional() -> None:
    cursor = SpendCursor("/r.jsonl", 10, plan="plus")
    text = status(loop(spend_cursors=[cursor], implementer_tokens=5))
    assert "reports a plus plan" in text and "notional" in text
    assert "notional" not in status(loop(implementer_tokens=5))


def test_status_names_a_model_priced_at_the_dearest_row() -> None:
    assert "gpt-9-future" in status(loop(implementer_unpriced=["gpt-9-future"]))


def test_the_rollout_names_the_plan_codex_reports(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    info = {"total_token_usage": {"output_tokens": 5}, "last_token_usage": {"output_tokens": 5}}
    payload = {"type": "token_count", "info": info, "rate_limits": {"plan_type": "pro"}}
    path.write_text(
        json.dumps({"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": payload})
        + "\n"
    )
    assert RolloutReader().read(str(path), SpendRead(0, ()), "2026-01-01T00:00:00").plan == "pro"


def test_doctor_says_what_codex_spend_is_read_from_and_what_it_cannot_price(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "gpt-9-future"\n\n[tui]\nmodel = "gpt-5.5"\n')
    text = "\n".join(line for _, line in codex_notes({}, config))
    assert "session rollout" in text and "--ephemeral" in text
    assert "gpt-9-future is not in the price table" in text
    assert "$10 in, $50 out per million" in text
    assert "ChatGPT plan" in text
    config.write_text('model = "gpt-5.5"\nmodel_provider = "openai"\n')
    text = "\n".join(line for _, line in codex_notes({"OPENAI_API_KEY": "k"}, config))
    assert "not in the price table" not in text and "ChatGPT plan" not in text


def test_doctor_says_claude_codes_dollars_may_be_notional() -> None:
    assert any("Claude plan" in line for _, line in claude_notes({}))
    assert not any("Claude plan" in line for _, line in claude_notes({"ANTHROPIC_API_KEY": "k"}))


def test_doctor_names_a_claude_model_the_table_lacks() -> None:
    # Claude Code's own default is priced; a model the table lacks is named, as an estimate.
    assert not [n for _, n in claude_notes({}) if "not in the price table" in n]
    (said,) = [
        n for _, n in claude_notes({"ANTHROPIC_MODEL": "claude-next-9"}) if "price table" in n
    ]
    assert "claude-next-9" in said and "estimated at the dearest row" in said
