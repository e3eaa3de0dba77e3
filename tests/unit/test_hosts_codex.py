"""Codex's dialect, golden: exactly the fields each event's closed schema has."""

from __future__ import annotations

import json

import pytest

from autopilot_codex.hosts.codex import render


def golden(
    event: str, block: str = "", deny: str = "", context: str = "", message: str = ""
) -> object:
    text = render(event, block, deny, context, message)
    return json.loads(text) if text else None


@pytest.mark.parametrize(
    "event", ["PreToolUse", "PostToolUse", "Stop", "SessionStart", "PreCompact"]
)
def test_nothing_to_say_is_the_empty_answer(event: str) -> None:
    assert render(event, "", "", "", "") == ""


def test_stop() -> None:
    assert golden("Stop", block="R") == {"decision": "block", "reason": "R"}
    assert golden("Stop", block="R", message="M") == {
        "decision": "block",
        "reason": "R",
        "systemMessage": "M",
    }
    # No hookSpecificOutput on Stop: the context cannot go anywhere.
    assert golden("Stop", block="R", context="C") == {"decision": "block", "reason": "R"}
    assert golden("Stop", message="M") == {"systemMessage": "M"}
    assert golden("Stop", deny="D") is None


def test_post_tool_use() -> None:
    assert golden("PostToolUse", block="R", context="C", message="M") == {
        "decision": "block",
        "reason": "R",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "C"},
        "systemMessage": "M",
    }
    assert golden("PostToolUse", context="C") == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "C"}
    }
    assert golden("PostToolUse", message="M") == {"systemMessage": "M"}


def test_pre_tool_use() -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "D",
        }
    }
    assert golden("PreToolUse", deny="D") == deny
    assert golden("PreToolUse", block="D") == deny  # a block is a deny here
    assert golden("PreToolUse", deny="D", message="M") == {**deny, "systemMessage": "M"}
    assert golden("PreToolUse", context="C") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "C"}
    }


def test_session_start() -> None:
    assert golden("SessionStart", context="C", message="M") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "C"},
        "systemMessage": "M",
    }
    assert golden("SessionStart", block="R") is None


def test_other_events_only_carry_a_message() -> None:
    assert golden("PreCompact", block="R", deny="D", context="C", message="M") == {
        "systemMessage": "M"
    }
    assert golden("UserPromptSubmit", block="R", context="C") == {
        "decision": "block",
        "reason": "R",
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "C"},
    }
