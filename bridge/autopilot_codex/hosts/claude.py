"""Claude Code: slash commands, `Edit|Write|MultiEdit` tools, and its hook answer dialect."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hookio import Answer

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


class Claude:
    name = "claude"
    edit_tools = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
    shell_tools = frozenset({"Bash"})
    file_tools = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Read"})
    session_env: str | None = "CLAUDE_CODE_SESSION_ID"

    def touched_paths(self, tool_name: str, tool_input: dict[str, Any]) -> list[str]:
        if tool_name not in self.file_tools:
            return []
        found = (tool_input.get(key) for key in ("file_path", "notebook_path", "path"))
        return [p for p in found if isinstance(p, str) and p]

    def render(self, event: str, answer: Answer) -> str:
        out: dict[str, Any] = {}
        if answer.deny:
            out["hookSpecificOutput"] = {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": answer.deny,
            }
        elif answer.block:
            out = {"decision": "block", "reason": answer.block}
        elif answer.context and event in CONTEXT_EVENTS:
            out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": answer.context}
        if answer.message:
            out["systemMessage"] = answer.message
        return json.dumps(out, ensure_ascii=False) if out else ""

    def command(self, verb: str) -> str:
        slash = SLASH.get(verb)
        return f"/autopilot-codex:{slash}" if slash else f"autopilot-codex {verb}"


HOST = Claude()
