"""Hook stdin in, hook answer out, per host dialect. Standard library only (hot path).

Field names follow the hosts' own hook payloads; unknown fields are ignored so a new host
version never breaks us, and wrong types read as absent rather than raising.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class BadInput(ValueError):
    """The payload is not a JSON object; the hook answers allow and says why on stderr."""


@dataclass(frozen=True)
class HookInput:
    event: str
    session_id: str | None = None
    cwd: str | None = None
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    stop_hook_active: bool = False
    last_assistant_message: str = ""
    source: str = ""
    trigger: str = ""


def parse(raw: bytes, event: str) -> HookInput:
    if not raw.strip():
        raise BadInput("empty hook input")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadInput(f"hook input is not JSON ({type(exc).__name__})") from exc
    if not isinstance(data, dict):
        raise BadInput("hook input is not a JSON object")
    tool_input = data.get("tool_input")
    return HookInput(
        event=event,
        session_id=_str(data.get("session_id")) or None,
        cwd=_str(data.get("cwd")) or None,
        tool_name=_str(data.get("tool_name")),
        tool_input=tool_input if isinstance(tool_input, dict) else {},
        stop_hook_active=data.get("stop_hook_active") is True,
        last_assistant_message=_str(data.get("last_assistant_message")),
        source=_str(data.get("source")),
        trigger=_str(data.get("trigger")),
    )


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def render_allow(message: str, host: str) -> str:
    if not message:
        return ""
    return _dump({"systemMessage": message})


def render_block(reason: str, message: str, host: str) -> str:
    out: dict[str, Any] = {"decision": "block", "reason": reason}
    if message:
        out["systemMessage"] = message
    return _dump(out)


def render_deny(reason: str, host: str) -> str:
    return _dump(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    )


def render_context(event: str, context: str, host: str) -> str:
    if not context:
        return ""
    return _dump({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def add_message(rendered: str, message: str) -> str:
    """Add a user-facing line to an answer, keeping whatever it already decides."""
    if not message:
        return rendered
    answer = json.loads(rendered) if rendered else {}
    previous = answer.get("systemMessage")
    answer["systemMessage"] = f"{previous}\n{message}" if previous else message
    return _dump(answer)


def add_context(rendered: str, event: str, context: str) -> str:
    """Add text for the model (hookSpecificOutput.additionalContext) to an answer."""
    answer = json.loads(rendered) if rendered else {}
    answer["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": context}
    return _dump(answer)


def _dump(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)
