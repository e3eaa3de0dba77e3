"""Reading Claude's stream-json and Codex's exec --json: message, action, cost."""

from __future__ import annotations

import json
from typing import Any

from autopilot_codex.rounds.stream import StreamState


def feed(host: str, *events: dict[str, Any] | str) -> StreamState:
    state = StreamState(host)
    for event in events:
        state.feed_line(event if isinstance(event, str) else json.dumps(event))
    return state


def assistant(mid: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"id": mid, "content": list(blocks)}}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "t", "name": name, "input": inp}


def test_claude_result() -> None:
    s = feed(
        "claude",
        {"type": "system", "subtype": "init"},
        assistant("m1", tool("Bash", command="pytest -q")),
        assistant("m2", text("All pass.")),
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "All pass.",
            "total_cost_usd": 0.25,
        },
    )
    assert (s.last_message, s.last_action, s.cost_usd, s.finished, s.error) == (
        "All pass.",
        "Bash: pytest -q",
        0.25,
        True,
        "",
    )


def test_claude_blocks_of_one_message_are_joined() -> None:
    s = feed("claude", assistant("m1", text("one")), assistant("m1", text("two")))
    assert s.last_message == "one\ntwo"


def test_claude_tool_use_only_final_message_has_no_text() -> None:
    s = feed(
        "claude",
        assistant("m1", text("::potter(ready)")),
        assistant("m2", tool("Read")),
        {"type": "result", "subtype": "success", "result": ""},
    )
    assert s.last_message == ""


def test_claude_empty_result_keeps_the_final_text() -> None:
    # claude-code#38651: a Stop hook emptied `result`; the final message itself still counts.
    s = feed(
        "claude",
        assistant("m1", text("Done.\n::potter(ready)")),
        {"type": "result", "subtype": "success", "result": ""},
    )
    assert s.last_message == "Done.\n::potter(ready)"


def test_claude_error_result() -> None:
    s = feed("claude", {"type": "result", "subtype": "error_max_turns", "is_error": True})
    assert s.error == "result error_max_turns" and s.finished


def test_noise_and_torn_lines_are_ignored() -> None:
    s = StreamState("claude")
    assert not s.feed_line("warning: something\n")
    assert not s.feed_line('{"type": "assis')
    assert not s.feed_line("[1, 2]")
    assert s.events == 0


def test_long_actions_are_cut() -> None:
    s = feed("claude", assistant("m", tool("Bash", command="x" * 500)))
    assert len(s.last_action) == 120 and s.last_action.endswith("…")


def test_codex_stream() -> None:
    s = feed(
        "codex",
        {"type": "thread.started", "thread_id": "th"},
        {"type": "item.started", "item": {"type": "command_execution", "command": "ls"}},
        {"type": "item.completed", "item": {"type": "file_change", "changes": [{"path": "a.py"}]}},
        # The hook-trust warning arrives as an error item: not a failure.
        {"type": "item.completed", "item": {"type": "error", "message": "hooks bypassed"}},
        {
            "type": "item.completed",
            "item": {"type": "agent_message", "text": "Done.\n::potter(ready)"},
        },
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 50, "output_tokens": 20},
        },
    )
    assert (s.last_message, s.last_action, s.tokens, s.finished, s.error, s.cost_usd) == (
        "Done.\n::potter(ready)",
        "edit: a.py",
        120,
        True,
        "",
        None,
    )


def test_codex_failed_turn() -> None:
    s = feed("codex", {"type": "turn.failed", "error": {"message": "rate limited"}})
    assert (s.error, s.finished) == ("rate limited", False)
