"""The Codex CLI: `apply_patch` edits, terminal commands, and a strict hook answer dialect.

Codex's output schemas reject unknown fields (the whole answer then fails open), so each event
gets only the fields its schema has: no hookSpecificOutput on Stop, and a block always with a
non-empty reason.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hookio import Answer

CONTEXT_EVENTS = frozenset({"PostToolUse", "SessionStart", "UserPromptSubmit"})
BLOCK_EVENTS = frozenset({"PostToolUse", "Stop", "SubagentStop", "UserPromptSubmit"})

_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)


class Codex:
    name = "codex"
    edit_tools = frozenset({"apply_patch"})
    shell_tools = frozenset({"Bash", "exec_command", "shell"})
    file_tools = frozenset({"apply_patch"})
    session_env: str | None = None

    def touched_paths(self, tool_name: str, tool_input: dict[str, Any]) -> list[str]:
        if tool_name != "apply_patch":
            return []
        patch = tool_input.get("command") or tool_input.get("input") or ""
        return _PATCH_PATH.findall(patch) if isinstance(patch, str) else []

    def render(self, event: str, answer: Answer) -> str:
        out: dict[str, Any] = {}
        if answer.deny and event == "PreToolUse":
            out["hookSpecificOutput"] = {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": answer.deny,
            }
        elif answer.block and event in BLOCK_EVENTS:
            out = {"decision": "block", "reason": answer.block}
        elif answer.context and event in CONTEXT_EVENTS:
            out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": answer.context}
        if answer.message:
            out["systemMessage"] = answer.message
        return json.dumps(out, ensure_ascii=False) if out else ""

    def command(self, verb: str) -> str:
        return f"autopilot-codex {verb}"


HOST = Codex()
