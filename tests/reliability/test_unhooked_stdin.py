"""A program started to read its commands later, through a channel no hook judges.

Codex's `exec_command` with `tty: true` leaves its process running and hands the model a
session id; `write_stdin` then types into that process, and no hook of Codex sees what it
types (only `exec_command` reaches PreToolUse, as `Bash` with the command alone). A bare
`bash`, `sh -i`, `python3` or `node` started that way was allowed by the rails, then fed
`git push --force` or `rm -rf src` unjudged. The rails already deny a shell reading a script
from a pipe they cannot read (`cat | sh`); a shell or interpreter left reading its standard
input with nothing given on the line is the same class: what it runs arrives later, unread.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Hook, payload
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import answer_of, start_loop
from tests.reliability.test_redos import codex_hook

GENEROUS_S = 120

# Each starts a program that runs whatever later arrives on its standard input.
LATER = (
    "bash",
    "sh",
    "bash -i",
    "bash -l",
    "zsh -s",
    "cd src && bash",
    "env FOO=1 bash --norc",
    "python3",
    "python3 -i",
    "python3 -i tool.py",
    "python3 -",
    "node",
    "node -i",
    "perl",
    "ruby",
    "sudo -u nobody sh",
)

# What runs is on the line, so the rails judge it as before.
GIVEN = (
    "bash script.sh",
    "bash -c 'ls -la'",
    "python3 -m pytest -q",
    "python3 tool.py --flag",
    "node build.js",
    "echo ls | sh",
    "sh <<'EOF'\nls\nEOF",
    "python3 - <<'EOF'\nprint(1)\nEOF",
    "bash < setup.sh",
    "python3 < gen.py",
)


def _reason(run_output: str) -> str:
    import json

    answer = json.loads(run_output) if run_output.strip() else {}
    specific = answer.get("hookSpecificOutput") or {}
    if specific.get("permissionDecision") != "deny":
        return ""
    return str(specific.get("permissionDecisionReason", ""))


@pytest.mark.timeout(GENEROUS_S)
def test_codex_a_program_left_reading_its_input_for_write_stdin_is_denied(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start_loop(repo, manager, capsys)
    for command in LATER:
        data = payload(
            "PreToolUse",
            repo,
            tool_name="Bash",
            tool_input={"command": command},
            turn_id="t1",
            model="gpt-5.5",
        )
        reason = _reason(codex_hook("PreToolUse", data, capsys, monkeypatch).stdout)
        assert "[unreadable]" in reason, command
    for command in GIVEN:
        data = payload(
            "PreToolUse",
            repo,
            tool_name="Bash",
            tool_input={"command": command},
            turn_id="t1",
            model="gpt-5.5",
        )
        reason = _reason(codex_hook("PreToolUse", data, capsys, monkeypatch).stdout)
        assert "[unreadable]" not in reason, (command, reason)


@pytest.mark.timeout(GENEROUS_S)
def test_claude_the_same_line_is_denied_too(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    # Claude Code has no tool that types into a running command, but a line is judged the
    # same whichever host asks: one rail, one reading.
    start_loop(repo, manager, capsys)
    data = payload("PreToolUse", repo, tool_name="Bash", tool_input={"command": "bash"})
    answer = answer_of(hook("PreToolUse", data))
    specific = answer.get("hookSpecificOutput") or {}
    assert "[unreadable]" in str(specific.get("permissionDecisionReason", ""))
