"""What the hosts' shared contract tests (`tests/integration/test_host_contract.py`) need to
know of one host: how it sends a hook's stdin and what its answers look like on stdout.

A host's card is the only thing its test package adds beside the host itself; the real hosts'
cards are here, the third host's sits in its own package (`tests/fakes/third_host`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autopilot_codex.host import Host
from autopilot_codex.hosts.claude import HOST as CLAUDE_HOST
from autopilot_codex.hosts.codex import HOST as CODEX_HOST

Payload = dict[str, Any]


class Has:
    """Equal to any string that contains `part`: a golden answer's reason is the bridge's
    words, and the contract pins where the host puts them, not every word."""

    def __init__(self, part: str) -> None:
        self.part = part

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.part in other

    def __hash__(self) -> int:
        return hash(self.part)

    def __repr__(self) -> str:
        return f"Has({self.part!r})"


@dataclass(frozen=True)
class Card:
    host: Host
    # The hook payloads in the host's dialect: a shell command, a file written, a Stop with
    # the model's last message (and whether the host already blocked this Stop once).
    shell: Callable[[str], Payload]
    write: Callable[[str], Payload]
    stop: Callable[[str, bool], Payload]
    # The stdout of a PreToolUse denied for `why`, a Stop blocked for `why` with a note for
    # the user, and a note alone.
    deny: Callable[[object], object]
    block: Callable[[object, object], object]
    note: Callable[[object], object]
    # A file in the worktree that holds the host's hooks, and one of its spend records under
    # a home (None: the host keeps none the bridge reads).
    settings_file: str
    spend_record: str | None


def _shared(tool: str, key: str) -> Callable[[str], Payload]:
    return lambda value: {"tool_name": tool, "tool_input": {key: value}}


def _stop(text: str, again: bool) -> Payload:
    return {"last_assistant_message": text, "stop_hook_active": again}


# Claude Code and Codex answer in one dialect.
def _deny(why: object) -> object:
    specific = {"permissionDecision": "deny", "permissionDecisionReason": why}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}}


def _block(why: object, said: object) -> object:
    return {"decision": "block", "reason": why, "systemMessage": said}


def _note(said: object) -> object:
    return {"systemMessage": said}


CLAUDE = Card(
    host=CLAUDE_HOST,
    shell=_shared("Bash", "command"),
    write=lambda path: {"tool_name": "Write", "tool_input": {"file_path": path, "content": "{}"}},
    stop=_stop,
    deny=_deny,
    block=_block,
    note=_note,
    settings_file=".claude/settings.json",
    spend_record=".claude/projects/-repo/s-1.jsonl",
)

CODEX = Card(
    host=CODEX_HOST,
    shell=_shared("Bash", "command"),
    write=lambda path: {
        "tool_name": "apply_patch",
        "tool_input": {"command": f"*** Begin Patch\n*** Add File: {path}\n+{{}}\n*** End Patch\n"},
    },
    stop=_stop,
    deny=_deny,
    block=_block,
    note=_note,
    settings_file=".codex/hooks.json",
    spend_record=".codex/sessions/2026/01/01/rollout-1.jsonl",
)
