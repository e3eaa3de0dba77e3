"""All output goes through here, so what reaches a hook's stdout is decided in one place."""

from __future__ import annotations

import sys


def out(text: str) -> None:
    """stdout: for a hook, JSON or nothing; for a command, what the user or model reads."""
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def terminal_command(verb: str) -> str:
    """A command as typed in a terminal: what every host can fall back to."""
    return f"autopilot-codex {verb}"


def err(text: str) -> None:
    if text:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()
