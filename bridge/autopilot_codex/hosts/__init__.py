"""The hosts a loop runs in (Claude Code, the Codex CLI): a protocol and a registry.

Adding a host is adding a module here and its line in `HOSTS` (mypy checks the host against
`Host`). Everything a host module imports must stay in the standard library: `hookrun` looks
the host up on every admitted hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..registry import Registry

if TYPE_CHECKING:
    from ..hookio import Answer

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


def _claude() -> Host:
    from .claude import HOST

    return HOST


def _codex() -> Host:
    from .codex import HOST

    return HOST


HOSTS: Registry[Host] = Registry("host", {"claude": _claude, "codex": _codex})


def get(name: str) -> Host:
    return HOSTS.get(name)


def terminal_command(verb: str) -> str:
    """A command as typed in a terminal: what every host can fall back to."""
    return f"autopilot-codex {verb}"
