"""The rails keep an unwalled implementer from writing the files a host or git reads to decide
what to run (`Host.run_files`, git's own), at any depth in the worktree; reading them, naming
them in a document or in a git command that only reads is fine."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.config import Config
from autopilot_codex.hookio import HookInput
from tests.rails_calls import check, check_command


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    (root / "docs").mkdir(parents=True)
    return root


def write_tool(path: Path, tool: str = "Write") -> HookInput:
    return HookInput(
        event="PreToolUse", tool_name=tool, tool_input={"file_path": str(path), "content": "{}"}
    )


@pytest.mark.parametrize(
    "rel",
    [
        ".mcp.json",
        ".claude/agents/helper.md",
        ".claude/skills/s/SKILL.md",
        ".codex/config.toml",
        ".agents/skills/s/SKILL.md",
        ".git/config",
        ".git/hooks/pre-commit",
        "vendor/dep/.git/config",
        "vendor/dep/.git/hooks/post-checkout",
        ".gitmodules",
        "vendor/dep/.git",
    ],
)
def test_the_file_tools_may_not_write_a_run_file(worktree: Path, rel: str) -> None:
    reason = check(write_tool(worktree / rel), Config(), worktree)
    assert reason and "[host-settings]" in reason, rel
    read = HookInput(
        event="PreToolUse", tool_name="Read", tool_input={"file_path": str(worktree / rel)}
    )
    assert check(read, Config(), worktree) is None


@pytest.mark.parametrize(
    "command",
    [
        "echo '{\"mcpServers\": {}}' > .mcp.json",
        "cat > .mcp.json <<'EOF'\n{}\nEOF",
        "cp /tmp/evil.json .mcp.json",
        "tee vendor/dep/.git/config < x",
        "mkdir -p .claude/agents",
        "mkdir -p sub/.git/hooks",
        "mv hooks.json .codex/hooks.json",
        "git diff --output=.mcp.json",
        "ln -s /tmp/evil .git/hooks/pre-commit",
        "cd vendor && printf x > dep/.git/config",
    ],
)
def test_the_shell_may_not_write_a_run_file(worktree: Path, command: str) -> None:
    reason = check_command(command, Config(), worktree, None)
    assert reason and "[host-settings]" in reason, command


def test_a_link_to_a_run_file_is_that_file(worktree: Path) -> None:
    (worktree / "innocent.json").symlink_to(worktree / ".mcp.json")
    reason = check(write_tool(worktree / "innocent.json"), Config(), worktree)
    assert reason and "[host-settings]" in reason


@pytest.mark.parametrize(
    "command",
    [
        "cat .mcp.json",
        "grep -r mcpServers .mcp.json .claude",
        "echo 'Put your servers in .mcp.json' >> docs/setup.md",
        "printf '%s\\n' .claude/settings.json",
        "git add .mcp.json docs/setup.md",
        "git log -- .claude/settings.json",
        "git status",
        "cp .mcp.json /tmp/backup.json",
        "ls -la .codex .agents",
        "mkdir -p sub/.git",
    ],
)
def test_reading_or_mentioning_a_run_file_is_fine(worktree: Path, command: str) -> None:
    assert check_command(command, Config(), worktree, None) is None, command


def test_a_document_about_mcp_json_may_be_written(worktree: Path) -> None:
    for rel in ("docs/mcp.json.md", "docs/.mcp.json", "mcp.json", "notes/claude-settings.md"):
        assert check(write_tool(worktree / rel), Config(), worktree) is None, rel


@pytest.mark.parametrize(
    ("command", "denied"),
    [
        ("cp .mcp.json backup.json", False),
        ("cp evil.json .mcp.json", True),
        ("cp -t .claude evil.md", True),
        ("cp .mcp.json .mcp.json", True),
    ],
)
def test_cp_writes_only_its_target(worktree: Path, command: str, denied: bool) -> None:
    assert (check_command(command, Config(), worktree, None) is not None) is denied
