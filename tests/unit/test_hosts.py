"""The hosts registry: tool names, touched paths, command names, and each host's dialect."""

from __future__ import annotations

import json

import pytest

from autopilot_codex import hosts
from autopilot_codex.errors import BridgeError
from autopilot_codex.hookio import Answer

CLAUDE = hosts.get("claude")
CODEX = hosts.get("codex")


def test_registry_knows_both_hosts_and_refuses_others() -> None:
    assert (CLAUDE.name, CODEX.name) == ("claude", "codex")
    with pytest.raises(BridgeError, match="unknown host 'cursor'; known: claude, codex"):
        hosts.get("cursor")


def test_tool_names_per_host() -> None:
    assert "Write" in CLAUDE.edit_tools and "apply_patch" not in CLAUDE.edit_tools
    assert CODEX.edit_tools == frozenset({"apply_patch"})
    assert "Bash" in CLAUDE.shell_tools and "Bash" in CODEX.shell_tools


def test_claude_paths_come_from_the_tool_input() -> None:
    assert CLAUDE.touched_paths("Write", {"file_path": "/r/a.py", "content": "x"}) == ["/r/a.py"]
    assert CLAUDE.touched_paths("NotebookEdit", {"notebook_path": "n.ipynb"}) == ["n.ipynb"]
    assert CLAUDE.touched_paths("Bash", {"command": "cat a.py"}) == []


def test_codex_paths_come_from_the_patch_text() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** Update File: src/a.py\n"
        "*** Move to: src/b.py\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\n"
    )
    assert CODEX.touched_paths("apply_patch", {"command": patch}) == [
        "hello.txt",
        "src/a.py",
        "src/b.py",
        "old.txt",
    ]
    assert CODEX.touched_paths("Bash", {"command": "*** Add File: x"}) == []


def test_commands_are_named_for_the_reader() -> None:
    assert CLAUDE.command("resume") == "/autopilot-codex:codex-resume"
    assert CLAUDE.command("ralph") == "/autopilot-codex:ralph-loop"
    assert CLAUDE.command("doctor") == "autopilot-codex doctor"
    assert CODEX.command("resume") == "autopilot-codex resume"
    assert hosts.terminal_command("plan") == "autopilot-codex plan"


BLOCK = Answer(block="keep going", message="banner")
DENY = Answer(deny="no force push")
CONTEXT = Answer(context="your task", message="banner")

# (host, event, answer) -> the exact stdout.
GOLDEN = [
    (CLAUDE, "Stop", Answer(), ""),
    (CLAUDE, "Stop", BLOCK, {"decision": "block", "reason": "keep going", "systemMessage": "banner"}),
    (CLAUDE, "PostToolUse", BLOCK, {"decision": "block", "reason": "keep going", "systemMessage": "banner"}),
    (
        CLAUDE,
        "PostToolUse",
        CONTEXT,
        {
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "your task"},
            "systemMessage": "banner",
        },
    ),
    (CLAUDE, "Stop", CONTEXT, {"systemMessage": "banner"}),
    (
        CLAUDE,
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
        CLAUDE,
        "SessionStart",
        Answer(context="task T1"),
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "task T1"}},
    ),
    (CLAUDE, "PreCompact", Answer(message="m"), {"systemMessage": "m"}),
    (CODEX, "Stop", Answer(), ""),
    # Codex rejects unknown fields: a Stop answer carries decision and reason only.
    (CODEX, "Stop", BLOCK, {"decision": "block", "reason": "keep going", "systemMessage": "banner"}),
    (CODEX, "Stop", Answer(block="go", context="ignored"), {"decision": "block", "reason": "go"}),
    (CODEX, "Stop", CONTEXT, {"systemMessage": "banner"}),
    (CODEX, "PostToolUse", Answer(block="fix it"), {"decision": "block", "reason": "fix it"}),
    (
        CODEX,
        "PostToolUse",
        Answer(context="stopped"),
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "stopped"}},
    ),
    (
        CODEX,
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
        CODEX,
        "SessionStart",
        Answer(context="task T1"),
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "task T1"}},
    ),
    # A block on an event without a block field would make the whole answer invalid.
    (CODEX, "SessionStart", Answer(block="x"), ""),
]


@pytest.mark.parametrize(("host", "event", "answer", "expected"), GOLDEN)
def test_rendering_is_golden(
    host: hosts.Host, event: str, answer: Answer, expected: object
) -> None:
    text = host.render(event, answer)
    assert (json.loads(text) if text else "") == expected


def test_with_message_keeps_the_decision() -> None:
    answer = Answer(block="r", message="one").with_message("two")
    assert (answer.block, answer.message) == ("r", "one\ntwo")
    assert Answer().with_message("") == Answer()
