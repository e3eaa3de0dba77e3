"""Claude Code: its hook dialect and answers, its settings files, its command names, and
its headless stream (`claude -p --output-format stream-json --verbose`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from autopilot_codex.hookio import Answer
from autopilot_codex.hosts.claude import HOST
from autopilot_codex.stream import StreamState

CLAUDE = HOST


def test_tool_names() -> None:
    assert "Write" in CLAUDE.edit_tools and "apply_patch" not in CLAUDE.edit_tools
    assert "Bash" in CLAUDE.shell_tools
    assert CLAUDE.read_tools == frozenset({"Read"})


def test_claude_paths_come_from_the_tool_input() -> None:
    assert CLAUDE.touched_paths("Write", {"file_path": "/r/a.py", "content": "x"}) == ["/r/a.py"]
    assert CLAUDE.touched_paths("NotebookEdit", {"notebook_path": "n.ipynb"}) == ["n.ipynb"]
    assert CLAUDE.touched_paths("Bash", {"command": "cat a.py"}) == []


def test_the_payload_reads_as_one_neutral_event() -> None:
    data = {
        "session_id": "s1",
        "cwd": "/r",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "last_assistant_message": "Done.",
        "stop_hook_active": True,
    }
    event = CLAUDE.event(data, "Stop")
    assert (event.session_id, event.cwd, event.last_assistant_message) == ("s1", "/r", "Done.")
    assert event.stop_hook_active and event.tool_input == {"command": "ls"}
    assert CLAUDE.shell_command(event.tool_name, event.tool_input) == "ls"
    assert CLAUDE.shell_command("Write", {"command": "ls"}) is None


@pytest.mark.parametrize(
    ("tasks", "lines"),
    [
        ([], ()),
        (None, ()),
        ("npm test", ()),
        ([{"description": "npm  test\n--watch"}], ("npm test --watch",)),
        (
            [{"command": "sleep 60", "description": ""}, {"type": "monitor"}, {}],
            ("sleep 60", "monitor", "a background task"),
        ),
        (["not a task", 3, {"description": 7, "command": "make"}], ("make",)),
    ],
)
def test_the_stop_s_background_work_is_one_line_a_task(
    tasks: object, lines: tuple[str, ...]
) -> None:
    """Claude Code's `background_tasks`: the session waits for that work, it is not done."""
    assert CLAUDE.event({"background_tasks": tasks}, "Stop").background == lines


def test_its_settings_files_are_the_ones_that_hold_hooks() -> None:
    for path in (
        ".claude/settings.json",
        "/r/.claude/settings.local.json",
        "a\\.claude\\settings.json",
    ):
        assert CLAUDE.is_settings_file(path), path
    for path in (".claude/commands/x.md", "settings.json", ".codex/hooks.json"):
        assert not CLAUDE.is_settings_file(path), path


def test_commands_are_slash_commands_where_one_exists() -> None:
    assert CLAUDE.command("resume") == "/autopilot-codex:codex-resume"
    assert CLAUDE.command("ralph") == "/autopilot-codex:ralph-loop"
    assert CLAUDE.command("cancel") == "/autopilot-codex:cancel-ralph"
    assert CLAUDE.command("doctor") == "autopilot-codex doctor"


def test_it_installs_itself_and_owns_its_boundary() -> None:
    assert CLAUDE.installer() is None
    boundary = CLAUDE.boundary()
    assert boundary is not None and boundary.flag_layer == "flag" and boundary.needs_tools


BLOCK = Answer(block="keep going", message="banner")
DENY = Answer(deny="no force push")
CONTEXT = Answer(context="your task", message="banner")

# (event, answer) -> the exact stdout.
GOLDEN = [
    ("Stop", Answer(), ""),
    ("Stop", BLOCK, {"decision": "block", "reason": "keep going", "systemMessage": "banner"}),
    (
        "PostToolUse",
        BLOCK,
        {"decision": "block", "reason": "keep going", "systemMessage": "banner"},
    ),
    (
        "PostToolUse",
        CONTEXT,
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "your task",
            },
            "systemMessage": "banner",
        },
    ),
    ("Stop", CONTEXT, {"systemMessage": "banner"}),
    (
        "PreToolUse",
        DENY,
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no force push",
            }
        },
    ),
    (
        "SessionStart",
        Answer(context="task T1"),
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "task T1"}},
    ),
    ("PreCompact", Answer(message="m"), {"systemMessage": "m"}),
]


@pytest.mark.parametrize(("event", "answer", "expected"), GOLDEN)
def test_rendering_is_golden(event: str, answer: Answer, expected: object) -> None:
    text = CLAUDE.render(event, answer)
    assert (json.loads(text) if text else "") == expected


# -- the headless stream ---------------------------------------------------------------------


def feed(*events: dict[str, Any] | str) -> StreamState:
    runner = HOST.headless()
    assert runner is not None
    state = StreamState(HOST.name, reader=runner.read)
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
        {"type": "system", "subtype": "init"},
        assistant("m1", tool("Bash", command="pytest -q")),
        assistant("m2", text("All pass.")),
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "All pass.",
            "total_cost_usd": 0.25,
            "usage": {
                "input_tokens": 12,
                "cache_creation_input_tokens": 3_000,
                "cache_read_input_tokens": 40_000,
                "output_tokens": 900,
                "server_tool_use": {"web_search_requests": 1},
                "service_tier": "standard",
            },
        },
    )
    assert (s.last_message, s.last_action, s.cost_usd, s.finished, s.error) == (
        "All pass.",
        "Bash: pytest -q",
        0.25,
        True,
        "",
    )
    # Every token kind counted once, as the transcript reader counts them.
    assert s.tokens == 12 + 3_000 + 40_000 + 900


def test_a_claude_result_without_usage_reports_no_tokens() -> None:
    s = feed({"type": "result", "subtype": "success", "result": "ok", "total_cost_usd": 0.1})
    assert (s.tokens, s.cost_usd) == (None, 0.1)


def test_claude_blocks_of_one_message_are_joined() -> None:
    s = feed(assistant("m1", text("one")), assistant("m1", text("two")))
    assert s.last_message == "one\ntwo"


def test_claude_tool_use_only_final_message_has_no_text() -> None:
    s = feed(
        assistant("m1", text("::potter(ready)")),
        assistant("m2", tool("Read")),
        {"type": "result", "subtype": "success", "result": ""},
    )
    assert s.last_message == ""


def test_claude_empty_result_keeps_the_final_text() -> None:
    # claude-code#38651: a Stop hook emptied `result`; the final message itself still counts.
    s = feed(
        assistant("m1", text("Done.\n::potter(ready)")),
        {"type": "result", "subtype": "success", "result": ""},
    )
    assert s.last_message == "Done.\n::potter(ready)"


def test_claude_error_result() -> None:
    s = feed({"type": "result", "subtype": "error_max_turns", "is_error": True})
    assert s.error == "result error_max_turns" and s.finished


@pytest.mark.parametrize(
    ("status", "kind", "limited"),
    [
        (429, "rate_limit_error", True),
        (529, None, True),
        (None, "overloaded_error", True),
        (500, "api_error", False),
    ],
)
def test_an_api_error_is_read_from_its_own_fields(
    status: int | None, kind: str | None, limited: bool
) -> None:
    event = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "",
        "api_error_status": status,
        "api_error_type": kind,
    }
    s = feed({k: v for k, v in event.items() if v is not None})
    assert s.rate_limited is limited
    assert s.error == f"API error {status} {kind}"


def test_noise_and_torn_lines_are_ignored() -> None:
    s = StreamState("claude", reader=feed().reader)
    assert not s.feed_line("warning: something\n")
    assert not s.feed_line('{"type": "assis')
    assert not s.feed_line("[1, 2]")
    assert s.events == 0


def test_long_actions_are_cut() -> None:
    s = feed(assistant("m", tool("Bash", command="x" * 500)))
    assert len(s.last_action) == 120 and s.last_action.endswith("…")


def test_the_command_line_and_its_default_permissions() -> None:
    runner = CLAUDE.headless()
    assert runner is not None and runner.executable == "claude"
    assert runner.command("do it", ["claude"], None) == [
        "claude",
        "-p",
        "do it",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash",
    ]
    assert runner.command("x", ["c"], ["--y"])[-1] == "--y"
