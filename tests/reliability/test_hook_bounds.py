"""A hook answers within the host's time limit whatever the size of the implementer's input.

The host kills a hook past its timeout (30 s for PreToolUse) and goes on: the tool then runs
unjudged. Reading a shell command costs time in proportion to its length (tens of
microseconds a character for a line of many short commands), so a command of a few
megabytes, well inside the payload the gate reads, was never judged at all. The rails read a
command only up to a bound that takes seconds at most, and deny a longer one as unreadable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.rails.judge import MAX_COMMAND_CHARS
from tests.conftest import Hook, payload
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import answer_of, start_loop

GENEROUS_S = 120


def bash(hook: Hook, repo: Path, command: str) -> str:
    data = payload("PreToolUse", repo, tool_name="Bash", tool_input={"command": command})
    answer = answer_of(hook("PreToolUse", data))
    specific = answer.get("hookSpecificOutput") or {}
    if specific.get("permissionDecision") != "deny":
        return ""
    return str(specific.get("permissionDecisionReason", ""))


@pytest.mark.timeout(GENEROUS_S)
def test_a_command_too_long_to_read_in_the_hook_s_time_is_denied_unread(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start_loop(repo, manager, capsys)
    # 8 MB of short commands, then the one that matters.
    flood = "ls; " * 2_000_000 + "git push --force origin main"
    assert "[unreadable]" in bash(hook, repo, flood)
    # Under the bound a long command is judged as ever: a heredoc is let through, the same
    # heredoc before a forced push is denied for the push.
    heredoc = "cat > notes.txt <<'EOF'\n" + "a line of notes\n" * 6_000 + "EOF\n"
    assert len(heredoc) < MAX_COMMAND_CHARS
    assert bash(hook, repo, heredoc) == ""
    assert "[force-push]" in bash(hook, repo, heredoc + "git push --force origin main")


@pytest.mark.timeout(GENEROUS_S)
def test_a_file_tool_naming_too_much_to_read_in_the_hook_s_time_is_denied_unread(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    hook: Hook,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.reliability.test_redos import codex_hook

    start_loop(repo, manager, capsys)
    # A path of 500k folders: the run-file patterns' `**` was matched by copying the rest of
    # the path at each folder, the square of its depth. No system opens a path this long as
    # written; a tool that normalises it first (`a/../` collapses) would.
    deep = str(repo / ("a/" * 500_000)) + "/x.txt"
    data = payload(
        "PreToolUse", repo, tool_name="Write", tool_input={"file_path": deep, "content": "x"}
    )
    answer = answer_of(hook("PreToolUse", data))
    reason = str(answer.get("hookSpecificOutput", {}).get("permissionDecisionReason", ""))
    assert "[unreadable]" in reason
    # A patch naming 200k files before a settings file: each path is judged in a fraction of a
    # millisecond, 200k of them past the host's timeout.
    many = "".join(f"*** Add File: f{i}.txt\n+x\n" for i in range(200_000))
    patch = f"*** Begin Patch\n{many}*** Add File: .mcp.json\n+{{}}\n*** End Patch\n"
    data = payload("PreToolUse", repo, tool_name="apply_patch", tool_input={"command": patch})
    answer = answer_of(codex_hook("PreToolUse", data, capsys, monkeypatch))
    reason = str(answer.get("hookSpecificOutput", {}).get("permissionDecisionReason", ""))
    assert "[unreadable]" in reason
    # A patch of an ordinary size is judged path by path as ever.
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+x\n*** Add File: .mcp.json\n+{}\n"
    data = payload("PreToolUse", repo, tool_name="apply_patch", tool_input={"command": patch})
    answer = answer_of(codex_hook("PreToolUse", data, capsys, monkeypatch))
    reason = str(answer.get("hookSpecificOutput", {}).get("permissionDecisionReason", ""))
    assert "[host-settings]" in reason
