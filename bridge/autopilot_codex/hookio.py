"""Hook stdin in as a typed payload, and the host-neutral answer out. Standard library only.

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


@dataclass(frozen=True)
class Answer:
    """What a hook decides, in no host's dialect; `hosts.<name>.render` writes it out.

    All empty is the silent allow (exit 0, empty stdout).
    """

    # Keep working, for this reason (Stop, PostToolUse).
    block: str = ""
    # Do not run this tool, for this reason (PreToolUse).
    deny: str = ""
    # Text for the model that does not block (PostToolUse, SessionStart).
    context: str = ""
    # A one-line banner for the user.
    message: str = ""

    def with_message(self, message: str) -> Answer:
        """Add a user-facing line, keeping whatever the answer already decides."""
        if not message:
            return self
        joined = f"{self.message}\n{message}" if self.message else message
        return Answer(self.block, self.deny, self.context, joined)


ALLOW = Answer()
