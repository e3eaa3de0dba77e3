"""A patch handed to Codex's shell: `apply_patch <<'EOF' ... EOF` through `exec_command`.

Codex intercepts a shell command that is an `apply_patch` (or `applypatch`) invocation and
applies the patch itself ("apply_patch was requested via exec_command"); its hooks see the
call as `Bash` with the command line, never as the `apply_patch` tool whose paths the rails
judge. So a patch that adds `.codex/config.toml`, `.mcp.json` or a git hook was let through
as a harmless heredoc. Such a line's patch is judged path by path, as the tool's is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import payload
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import start_loop
from tests.reliability.test_redos import codex_hook

GENEROUS_S = 120


def patch(path: str) -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+notify = ['sh']\n*** End Patch\n"


def lines(path: str) -> list[str]:
    body = patch(path)
    # A nested `.codex/` is Codex's too; a nested `.mcp.json` is no host's.
    return [
        f"apply_patch <<'EOF'\n{body}EOF",
        f"applypatch <<'EOF'\n{body}EOF",
        f"apply_patch '{body}'",
        f"bash -lc \"apply_patch <<'EOF'\n{body}EOF\"",
    ] + ([f"cd sub && apply_patch <<'EOF'\n{body}EOF"] if path.startswith(".codex/") else [])


def denial(
    repo: Path, command: str, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch
) -> str:
    data = payload(
        "PreToolUse",
        repo,
        tool_name="Bash",
        tool_input={"command": command},
        turn_id="t",
        model="m",
    )
    out = codex_hook("PreToolUse", data, capsys, mp).stdout
    answer = json.loads(out) if out.strip() else {}
    return str((answer.get("hookSpecificOutput") or {}).get("permissionDecisionReason", ""))


@pytest.mark.timeout(GENEROUS_S)
def test_codex_a_patch_through_the_shell_is_judged_as_the_patch_tool_s(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start_loop(repo, manager, capsys)
    for target in (".codex/config.toml", ".mcp.json", ".git/hooks/pre-commit"):
        for command in lines(target):
            assert "[host-settings]" in denial(repo, command, capsys, monkeypatch), command
    for command in lines("src/app.py"):
        assert denial(repo, command, capsys, monkeypatch) == "", command
