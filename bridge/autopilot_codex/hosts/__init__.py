"""The hosts a loop runs in (Claude Code, the Codex CLI): a protocol and a registry.

Adding a host is adding a module here and a line in `HOSTS`. Everything a host module
imports must stay in the standard library: `hookrun` looks the host up on every admitted hook.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import BridgeError

if TYPE_CHECKING:
    from ..hookio import Answer

# host name -> module with a module-level `HOST` object.
HOSTS: dict[str, str] = {
    "claude": "autopilot_codex.hosts.claude",
    "codex": "autopilot_codex.hosts.codex",
}


class Host(Protocol):
    name: str
    # Tools whose call changes files (reviewed in `edit` mode), run shell commands (rails,
    # `commit` mode), or name files at all (rails on secrets and the loop's own state).
    edit_tools: frozenset[str]
    shell_tools: frozenset[str]
    file_tools: frozenset[str]
    # The environment variable that carries the session id into the implementer's commands.
    session_env: str | None

    def touched_paths(self, tool_name: str, tool_input: dict[str, Any]) -> list[str]:
        """The file paths a tool call names, as given (relative or absolute)."""
        ...

    def render(self, event: str, answer: Answer) -> str:
        """The answer as this host's hook stdout: JSON, or "" for a silent allow."""
        ...

    def command(self, verb: str) -> str:
        """How a user of this host runs one of our commands, for messages."""
        ...


def get(name: str) -> Host:
    module = HOSTS.get(name)
    if module is None:
        raise BridgeError(f"unknown host {name!r}; known: {', '.join(sorted(HOSTS))}")
    host: Host = importlib.import_module(module).HOST
    return host


def terminal_command(verb: str) -> str:
    """A command as typed in a terminal: what every host can fall back to."""
    return f"autopilot-codex {verb}"
