"""Hook stdin in as one host-neutral event, and the host-neutral answer out. Standard library
only.

Each host reads its own payload into `HookInput` (`Host.event`); `from_payload` is the reading
for the field names Claude Code and Codex share. Unknown fields are ignored so a new host
version never breaks us, and wrong types read as absent rather than raising.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from . import surrogates

if TYPE_CHECKING:
    from collections.abc import Mapping


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
    # Where the host records the session (Claude Code: its transcript), read for its spend.
    transcript_path: str = ""
    # The model the host says the session runs (Codex), the floor of its spend's price.
    model: str = ""
    # Why a session ended (SessionEnd): Claude Code's `clear|resume|logout|prompt_input_exit|
    # other`, Codex's `other`.
    reason: str = ""
    # At Stop, the work the host still runs in the background for the session (Claude Code's
    # `background_tasks`: shells, subagents, monitors), one line each: the session is paused
    # until that work wakes it, not done.
    background: tuple[str, ...] = ()


class Reader(Protocol):
    """What `parse` needs of a host: its reading of a payload (`Host.event`)."""

    def event(self, data: Mapping[str, Any], event: str) -> HookInput: ...


def parse(raw: bytes, event: str, host: Reader | None = None) -> HookInput:
    """The payload as the host-neutral event, read in `host`'s dialect (the shared field
    names without one)."""
    data = load(raw)
    return host.event(data, event) if host is not None else from_payload(data, event)


def load(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        raise BadInput("empty hook input")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadInput(f"hook input is not JSON ({type(exc).__name__})") from exc
    if not isinstance(data, dict):
        raise BadInput("hook input is not a JSON object")
    return surrogates.scrub(data) if surrogates.possible(raw) else data


def from_payload(data: Mapping[str, Any], event: str) -> HookInput:
    """The fields Claude Code and Codex name alike."""
    tool_input = data.get("tool_input")
    return HookInput(
        event=event,
        session_id=text(data.get("session_id")) or None,
        cwd=text(data.get("cwd")) or None,
        tool_name=text(data.get("tool_name")),
        tool_input=tool_input if isinstance(tool_input, dict) else {},
        stop_hook_active=data.get("stop_hook_active") is True,
        last_assistant_message=text(data.get("last_assistant_message")),
        source=text(data.get("source")),
        trigger=text(data.get("trigger")),
        transcript_path=_path(data.get("transcript_path")),
        model=text(data.get("model")),
        reason=text(data.get("reason")),
        background=_background(data.get("background_tasks")),
    )


# Background tasks named at most, and each one's line at most (a description or a command).
_TASKS, _TASK_CHARS = 5, 120


def _background(value: object) -> tuple[str, ...]:
    """Each in-flight background task as one short line; anything not a task reads as none."""
    if not isinstance(value, list):
        return ()
    lines = []
    for task in value:
        if not isinstance(task, dict):
            continue
        words = text(task.get("description")) or text(task.get("command")) or text(task.get("type"))
        line = " ".join((words or "a background task").split())
        lines.append(line if len(line) <= _TASK_CHARS else line[: _TASK_CHARS - 1] + "…")
    return tuple(lines)


def shell_line(value: object) -> str:
    """A shell tool's `command`: a line, or an argv quoted back into one (Codex passes argv,
    and `bash -lc "a b"` must stay one script)."""
    if isinstance(value, list):
        import shlex

        return shlex.join(str(c) for c in value)
    return value if isinstance(value, str) else ""


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Answer:
    """What a hook decides, in no host's dialect; the host's `render` writes it out.

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
    # End the host's turn now, for this reason (PostToolUse: a cap reached mid-turn).
    halt: str = ""

    def with_message(self, message: str) -> Answer:
        """Add a user-facing line, keeping whatever the answer already decides."""
        if not message:
            return self
        joined = f"{self.message}\n{message}" if self.message else message
        return replace(self, message=joined)


ALLOW = Answer()


def _path(value: object) -> str:
    """A file path from the payload; "" for one holding a NUL, which names no file (the OS
    refuses it with ValueError, not OSError, so every reader would have to know)."""
    path = text(value)
    return "" if "\0" in path else path


class SharedDialect:
    """The hook fields and shell tool input Claude Code and Codex name alike, read for a host,
    and the answer written in the JSON both read, shaped by the host's own table below."""

    shell_tools: frozenset[str]
    # Events whose `hookSpecificOutput` may carry `additionalContext` for the model.
    context_events: frozenset[str]
    # Events that read `decision: block`, and those that read a deny (PreToolUse's permission
    # decision); None: every event.
    block_events: frozenset[str] | None = None
    deny_events: frozenset[str] | None = None
    # A block at PreToolUse is written as its deny (a host that reads no block there).
    block_as_deny = False
    # Context written beside a refusal too (else only in an answer that refuses nothing).
    context_beside_refusal = False

    def event(self, data: Mapping[str, Any], event: str) -> HookInput:
        return from_payload(data, event)

    def render(self, event: str, answer: Answer) -> str:
        """The answer as the hook's stdout: one JSON object, or "" for a silent allow."""
        out: dict[str, Any] = {}
        specific: dict[str, Any] = {}
        deny = answer.deny if self.deny_events is None or event in self.deny_events else ""
        if not deny and self.block_as_deny and event == "PreToolUse":
            deny = answer.block
        if deny:
            specific = {"permissionDecision": "deny", "permissionDecisionReason": deny}
        elif answer.block and (self.block_events is None or event in self.block_events):
            out = {"decision": "block", "reason": answer.block}
        refused = bool(specific or out)
        beside = self.context_beside_refusal or not refused
        if answer.context and event in self.context_events and beside:
            specific["additionalContext"] = answer.context
        if specific:
            name = "PreToolUse" if deny else event
            out["hookSpecificOutput"] = {"hookEventName": name, **specific}
        if answer.message:
            out["systemMessage"] = answer.message
        if answer.halt:
            out |= {"continue": False, "stopReason": answer.halt}
        return json.dumps(out, ensure_ascii=False) if out else ""

    def shell_command(self, tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
        return shell_line(tool_input.get("command")) if tool_name in self.shell_tools else None
