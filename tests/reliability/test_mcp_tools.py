"""A tool served by an MCP server: the rails judged it as nothing.

Both hosts name such a tool `mcp__<server>__<tool>` and hand it to PreToolUse like their own,
but the bridge read a shell line only from the hosts' own shell tools and paths only from
their file tools, so a user's filesystem or shell server (started by the host as its child,
outside the wall) wrote `.git/config`, the hosts' settings or a credential store, or ran a
forced push, with nothing judged. Its input is all the bridge sees of it, so every string in
it is judged as a path the tool may write, and a command field (or argv) as a shell line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Hook, payload
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import answer_of, start_loop
from tests.reliability.test_redos import codex_hook

GENEROUS_S = 120


def _denial(run_stdout: str) -> str:
    import json

    answer = json.loads(run_stdout) if run_stdout.strip() else {}
    specific = answer.get("hookSpecificOutput") or {}
    if specific.get("permissionDecision") != "deny":
        return ""
    return str(specific.get("permissionDecisionReason", ""))


def harmful(repo: Path) -> list[tuple[str, dict[str, Any], str]]:
    settings = str(Path.home() / ".claude" / "settings.json")
    return [
        (
            "mcp__fs__write_file",
            {"path": ".git/config", "content": "[core]\n\tfsmonitor = ./x\n"},
            "host-settings",
        ),
        (
            "mcp__fs__write_file",
            {"filePath": str(repo / ".mcp.json"), "text": "{}"},
            "host-settings",
        ),
        ("mcp__fs__edit", {"edits": [{"target": settings, "new": "{}"}]}, "host-settings"),
        ("mcp__fs__move_file", {"source": "a.txt", "destination": "~/.ssh/authorized_keys"}, ""),
        ("mcp__shell__run_command", {"command": "git push --force origin main"}, "force-push"),
        ("mcp__term__exec", {"cmd": ["git", "push", "-f", "origin", "main"]}, "force-push"),
        ("mcp__proc__spawn", {"command": "git", "args": ["reset", "--hard"]}, "reset-hard"),
    ]


HARMLESS: list[tuple[str, dict[str, Any]]] = [
    ("mcp__docs__search", {"query": "how to configure .mcp.json servers", "limit": 5}),
    ("mcp__fs__write_file", {"path": "src/app.py", "content": "print('hi')\n"}),
    ("mcp__shell__run_command", {"command": "pytest -q"}),
    ("mcp__github__create_issue", {"title": "flaky test", "body": "run pytest -q twice"}),
]


@pytest.mark.timeout(GENEROUS_S)
def test_claude_an_mcp_tool_that_writes_a_run_file_or_runs_a_forced_push_is_denied(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start_loop(repo, manager, capsys)
    for tool, tool_input, rule in harmful(repo):
        data = payload("PreToolUse", repo, tool_name=tool, tool_input=tool_input)
        reason = _denial(hook("PreToolUse", data).stdout)
        assert reason, (tool, tool_input)
        assert f"[{rule}]" in reason or not rule, (tool, reason)
    for tool, tool_input in HARMLESS:
        data = payload("PreToolUse", repo, tool_name=tool, tool_input=tool_input)
        answer = answer_of(hook("PreToolUse", data))
        assert not answer.get("hookSpecificOutput"), (tool, answer)


@pytest.mark.timeout(GENEROUS_S)
def test_codex_an_mcp_tool_is_judged_the_same(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start_loop(repo, manager, capsys)
    for tool, tool_input, _rule in harmful(repo):
        data = payload(
            "PreToolUse", repo, tool_name=tool, tool_input=tool_input, turn_id="t", model="m"
        )
        assert _denial(codex_hook("PreToolUse", data, capsys, monkeypatch).stdout), tool
    tool, tool_input = HARMLESS[0]
    data = payload(
        "PreToolUse", repo, tool_name=tool, tool_input=tool_input, turn_id="t", model="m"
    )
    assert not _denial(codex_hook("PreToolUse", data, capsys, monkeypatch).stdout)
