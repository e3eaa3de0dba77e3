"""All output goes through here, so what reaches a hook's stdout is decided in one place."""

from __future__ import annotations

import sys


def out(text: str) -> None:
    """stdout: for a hook, JSON or nothing; for a command, what the user or model reads.
    Every line is `visible`: a refusal quotes a setting's or a file's name as well."""
    if text:
        text = visible(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def terminal_command(verb: str) -> str:
    """A command as typed in a terminal: what every host can fall back to."""
    return f"autopilot-codex {verb}"


def err(text: str) -> None:
    if text:
        text = visible(text)
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()


# Characters a terminal obeys rather than shows: C0 controls but tab and newline, DEL, C1
# controls (0x9b alone starts a sequence on some terminals), and the bidirectional overrides
# that reorder what is shown. The implementer's text is shown with each written out instead.
# Written as JSON writes them, so a command's --json output stays JSON.
_OBEYED = {
    c: f"\\u{c:04x}"
    for c in (
        *range(0x00, 0x09),
        *range(0x0B, 0x20),
        *range(0x7F, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
}


def visible(text: str) -> str:
    """Text the implementer wrote, safe to print to a terminal: every character a terminal
    would obey (a clipboard write, a cursor move, a title) written out as an escape."""
    return text.translate(_OBEYED)
