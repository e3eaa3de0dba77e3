"""A round's spend estimated from its host's stream, line by line (`Headless.estimate`):
Claude Code's `stream-json` assistant lines, in the shape the real CLI writes them (one line
per content block, each repeating the message's id, model and usage), priced by the Claude
host's table with the user's own rows first; Codex's `exec --json`, which tells no usage
before `turn.completed`. Attack first: nothing in the stream lowers the estimate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from autopilot_codex import hosts
from autopilot_codex.host import Estimate, Headless
from autopilot_codex.hosts.claude.prices import DEAREST
from autopilot_codex.prices import Price
from tests.fakes.fake_host import CLAUDE_USAGE

# What the real CLI writes of one message's usage (each token kind apart).
USAGE = CLAUDE_USAGE
# claude-sonnet-4-5 ($3 in, $15 out, $0.30 cache read, $3.75 cache write per million).
SONNET = (6 * 3.0 + 400 * 15.0 + 12_000 * 0.3 + 1_500 * 3.75) / 1e6


def line(mid: str, block: dict[str, Any], usage: object = None, model: str = "") -> str:
    message = {
        "id": mid,
        "model": model or "claude-sonnet-4-5-20250929",
        "role": "assistant",
        "type": "message",
        "content": [block],
        "usage": USAGE if usage is None else usage,
    }
    return json.dumps({"type": "assistant", "message": message, "session_id": "s"})


def runner(host: str) -> Headless:
    found = hosts.get(host).headless()
    assert found is not None
    return found


def estimate(lines: list[str], host: str = "claude", own: dict[str, Price] | None = None) -> float:
    spend, headless = Estimate(), runner(host)
    for text in lines:
        headless.estimate(spend, json.loads(text), own or {})
    return spend.usd


TEXT = {"type": "text", "text": "Let me look."}
TOOL = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}


def test_a_message_split_over_lines_is_counted_once_by_its_id() -> None:
    assert estimate([line("msg_1", TEXT), line("msg_1", TOOL)]) == pytest.approx(SONNET)


def test_messages_add_up_as_they_come() -> None:
    lines = [line("msg_1", TEXT), line("msg_1", TOOL), line("msg_2", TEXT)]
    assert estimate(lines) == pytest.approx(2 * SONNET)


def test_the_users_own_row_comes_first_and_an_unknown_model_is_dearest() -> None:
    free = {"claude-sonnet-4-5": Price(0.0, 0.0, 0.0, 0.0)}
    assert estimate([line("msg_1", TEXT)], own=free) == 0.0
    spend = Estimate()
    runner("claude").estimate(spend, json.loads(line("msg_1", TEXT, model="claude-nova-9")), {})
    assert spend.usd == pytest.approx(DEAREST.usd(6, 400, 12_000, 1_500))
    assert (spend.usd > SONNET, spend.unpriced) == (True, "claude-nova-9")


def test_other_events_add_nothing() -> None:
    result = {"type": "result", "total_cost_usd": 9.0, "usage": USAGE}
    user = {"type": "user", "message": {"role": "user", "content": [], "usage": USAGE}}
    torn = {"type": "assistant", "message": "not an object"}
    bare = {"type": "assistant", "message": {"id": "msg_1", "content": [TEXT]}}
    assert estimate([json.dumps(e) for e in (result, user, torn, bare)]) == 0.0


def test_codex_tells_no_usage_before_its_turn_ends() -> None:
    turn = {"type": "turn.completed", "usage": {"input_tokens": 1000, "output_tokens": 100}}
    item = {"type": "item.completed", "item": {"type": "agent_message", "text": "hi"}}
    assert estimate([json.dumps(turn), json.dumps(item)], host="codex") == 0.0


# -- attack: the estimate only adds -----------------------------------------------------------


def test_a_later_line_of_a_message_cannot_lower_what_it_counted() -> None:
    smaller = {**USAGE, "output_tokens": 1, "cache_read_input_tokens": 0}
    assert estimate([line("msg_1", TEXT), line("msg_1", TOOL, smaller)]) == pytest.approx(SONNET)


def test_a_later_line_saying_more_raises_it_to_that_once() -> None:
    bigger = {**USAGE, "output_tokens": 800}
    lines = [line("msg_1", TEXT), line("msg_1", TOOL, bigger), line("msg_1", TOOL, bigger)]
    assert estimate(lines) == pytest.approx(SONNET + 400 * 15.0 / 1e6)


@pytest.mark.parametrize("bad", [-(10**9), True, "100000", 1.5e9, None])
def test_counts_that_are_not_counts_add_nothing_and_take_nothing(bad: object) -> None:
    odd = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_input_tokens"), bad)
    lines = [line("msg_1", TEXT), line("msg_2", TEXT, {**USAGE, **odd})]
    assert estimate(lines) == pytest.approx(SONNET + 1_500 * 3.75 / 1e6)


def test_a_negative_price_row_cannot_take_back_spend() -> None:
    negative = {"claude-sonnet-4-5": Price(-100.0, -100.0, -100.0, -100.0)}
    spend = Estimate(usd=1.0)
    runner("claude").estimate(spend, json.loads(line("msg_1", TEXT)), negative)
    assert spend.usd == 1.0


def test_messages_without_an_id_are_each_counted() -> None:
    assert estimate([line("", TEXT), line("", TOOL)]) == pytest.approx(2 * SONNET)
