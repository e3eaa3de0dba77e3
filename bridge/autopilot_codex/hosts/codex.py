"""Hook answers in the Codex CLI's dialect. Standard library only (hot path).

Every Codex hook output schema is closed (``additionalProperties: false``): one field too many
and the answer counts as a failed hook, which does not block. So each event gets exactly the
fields its schema has, and nothing Claude-only:

- Stop: ``decision``/``reason`` (+ ``systemMessage``); no ``hookSpecificOutput`` at all;
- PostToolUse: ``decision``/``reason``, ``hookSpecificOutput.additionalContext``; a block
  *replaces the tool's output* with the reason, so the reason must read as a tool result;
- PreToolUse: a deny is ``hookSpecificOutput.permissionDecision: "deny"`` with a reason;
- SessionStart / UserPromptSubmit: ``hookSpecificOutput.additionalContext``.

``block`` and ``deny`` need a non-empty reason on Codex; an empty one means "do not".
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hookio import Answer

_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)

# Events whose answers may carry hookSpecificOutput.additionalContext.
CONTEXT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit"})
# Events that can refuse to go on with decision/reason.
BLOCK_EVENTS = frozenset({"PostToolUse", "Stop", "SubagentStop", "UserPromptSubmit"})


def render(event: str, block: str, deny: str, context: str, message: str) -> str:
    """The hook's stdout: ``block`` (a reason to keep going / to refuse), ``deny`` (a
    PreToolUse refusal), ``context`` (text for the model), ``message`` (for the user). Empty
    strings mean "none"; all empty is the empty answer (allow)."""
    answer: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    refusal = deny or block
    if event == "PreToolUse" and refusal:
        specific["permissionDecision"] = "deny"
        specific["permissionDecisionReason"] = refusal
    elif event in BLOCK_EVENTS and block:
        answer["decision"] = "block"
        answer["reason"] = block
    if context and event in CONTEXT_EVENTS:
        specific["additionalContext"] = context
    if specific:
        answer["hookSpecificOutput"] = {"hookEventName": event, **specific}
    if message:
        answer["systemMessage"] = message
    return json.dumps(answer, ensure_ascii=False) if answer else ""


class Codex:
    name = "codex"
    edit_tools = frozenset({"apply_patch"})
    shell_tools = frozenset({"Bash", "exec_command", "shell"})
    file_tools = frozenset({"apply_patch"})
    # The model's shell commands see the thread id under both names (pinned by a contract
    # test); hooks get it only in the payload.
    session_env: str | None = "CODEX_THREAD_ID"

    def touched_paths(self, tool_name: str, tool_input: dict[str, Any]) -> list[str]:
        if tool_name != "apply_patch":
            return []
        patch = tool_input.get("command") or tool_input.get("input") or ""
        return _PATCH_PATH.findall(patch) if isinstance(patch, str) else []

    def render(self, event: str, answer: Answer) -> str:
        return render(event, answer.block, answer.deny, answer.context, answer.message)

    def command(self, verb: str) -> str:
        return f"autopilot-codex {verb}"


HOST = Codex()
