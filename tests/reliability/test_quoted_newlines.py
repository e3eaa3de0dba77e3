"""A newline inside double quotes, dropped by the rails' reading of the line.

The shell keeps every character between double quotes, newlines included, but the rails
joined a quoted word's pieces without the newlines between them: `bash -c "echo hi<newline>git
push --force origin main"` read as one `echo higit push ...`, so the forced push the inner
shell runs was never judged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Hook, payload
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import answer_of, start_loop

GENEROUS_S = 120


def denial(hook: Hook, repo: Path, command: str) -> str:
    data = payload("PreToolUse", repo, tool_name="Bash", tool_input={"command": command})
    answer = answer_of(hook("PreToolUse", data))
    return str((answer.get("hookSpecificOutput") or {}).get("permissionDecisionReason", ""))


@pytest.mark.timeout(GENEROUS_S)
def test_a_command_after_a_quoted_newline_is_judged(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start_loop(repo, manager, capsys)
    for command in (
        'bash -c "echo hi\ngit push --force origin main"',
        'sh -c "ls\n\ngit reset --hard"',
        'bash -lc "cd src\ngit push -f origin main"',
    ):
        assert "rail [" in denial(hook, repo, command), command
    # What the quotes hold is still one word: a message of two lines is not two commands.
    assert denial(hook, repo, 'git commit -m "fix\n\ngit push --force is not run"') == ""
