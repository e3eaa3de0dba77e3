"""Claude Code: its hook dialect, its settings files, its slash commands; its headless runner
(`headless`) and doctor check (`doctor`) load only when asked. Standard library only."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...hookio import SharedDialect
from ...wall import config_folder
from ..spendplace import SpendPlace

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ...host import Boundary, Headless, HostReport, Installer, SpendReader

# Verbs with a slash command of their own; the rest are terminal commands.
SLASH = {
    "plan": "codex-plan",
    "status": "codex-status",
    "next": "codex-next",
    "stop": "codex-stop",
    "resume": "codex-resume",
    "ralph": "ralph-loop",
    "cancel": "cancel-ralph",
}

# Events whose hookSpecificOutput may carry additionalContext for the model.
CONTEXT_EVENTS = frozenset({"PostToolUse", "SessionStart", "UserPromptSubmit"})
# The settings files that hold the hooks (and `disableAllHooks`).
_SETTINGS = re.compile(r"(^|/)\.claude/settings(\.local)?\.json$")
# The session transcripts (and their subagents'): `~/.claude/projects/<project>/<session>.jsonl`
# and `<session>/subagents/*.jsonl`. Claude Code's memory files sit beside them, the
# implementer's to write.
_SPEND = SpendPlace(
    re.compile(r"(^|/)\.claude/projects(?=/|$)"),
    "CLAUDE_CONFIG_DIR",
    ".claude",
    "projects",
    spared=re.compile(r"/[^/]+/memory(/|$)"),
)


# What Claude Code reads to decide what to run (its docs; docs/hosts-sandbox.md): the project's
# MCP servers (`.mcp.json`, started unsandboxed as its children), and `.claude/` at any depth:
# settings (hooks, `statusLine`, `apiKeyHelper`, MCP approvals), skills, agents and commands
# (their hooks and `!` blocks). `CLAUDE.md` is text; what it imports is text too.
RUN_FILES: tuple[str, ...] = (".mcp.json", "**/.claude/**")
# Its login: `.credentials.json` in its config folder (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
LOGIN = ".credentials.json"


class Claude(SharedDialect):
    name = "claude"
    label = "Claude Code"
    edit_tools = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
    shell_tools = frozenset({"Bash"})
    read_tools = frozenset({"Read"})
    file_tools = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Read"})
    session_env: str | None = "CLAUDE_CODE_SESSION_ID"
    question_tools = frozenset({"AskUserQuestion"})
    run_files: tuple[str, ...] = RUN_FILES
    config_env: str | None = "CLAUDE_CONFIG_DIR"
    cli_names = r"claude|claude-code"
    cli_packages: tuple[str, ...] = ("@anthropic-ai/claude-code",)
    # Its answer (`SharedDialect.render`): a block and a deny read at any event, context only
    # in an answer that refuses nothing.
    context_events = CONTEXT_EVENTS

    def logins(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [config_folder(env, home, "CLAUDE_CONFIG_DIR", ".claude") / LOGIN]

    def touched_paths(self, tool_name: str, tool_input: Mapping[str, Any]) -> list[str]:
        if tool_name not in self.file_tools:
            return []
        found = (tool_input.get(key) for key in ("file_path", "notebook_path", "path"))
        return [p for p in found if isinstance(p, str) and p]

    def is_settings_file(self, path: str) -> bool:
        return _SETTINGS.search(path.replace("\\", "/")) is not None

    def is_spend_record(self, path: str) -> bool:
        return _SPEND.holds(path)

    def command(self, verb: str) -> str:
        slash = SLASH.get(verb)
        return f"/autopilot-codex:{slash}" if slash else f"autopilot-codex {verb}"

    def headless(self) -> Headless | None:
        from .headless import HEADLESS

        return HEADLESS

    def installer(self) -> Installer | None:
        return None  # Claude Code installs plugins itself (the launcher's `install`)

    def doctor(self, env: Mapping[str, str], repo: Path | None) -> HostReport:
        from .doctor import report

        return report(env)

    def spend_reader(self) -> SpendReader | None:
        from .transcript import TranscriptReader

        return TranscriptReader()

    def boundary(self) -> Boundary | None:
        from .boundary import BOUNDARY

        return BOUNDARY


HOST = Claude()
