"""`::potter(ready)` / `::potter(exit)` in a round's last message.

A marker counts only where the protocol puts it: alone on a line or at the end of a line, in
prose. A marker quoted in backticks or inside a fenced code block (the worker explaining the
protocol, or echoing its prompt) is a mention, not a signal, and never ends a round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

READY = "::potter(ready)"
EXIT = "::potter(exit)"

_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_SPAN = re.compile(r"(`+).*?\1")
# At the end of a line (after prose or alone), optionally followed by spaces only.
_AT_END = re.compile(r"(?:^|\s)(::potter\((ready|exit)\))\s*$")


@dataclass(frozen=True)
class Markers:
    ready: bool = False
    exit: bool = False

    def names(self) -> list[str]:
        return [name for name, on in (("ready", self.ready), ("exit", self.exit)) if on]


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(index, line with inline code blanked) for every line outside fenced code blocks."""
    out: list[tuple[int, str]] = []
    fence = ""
    for i, line in enumerate(text.splitlines()):
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            continue
        if match:
            fence = match.group(1)
            continue
        out.append((i, _SPAN.sub(lambda m: " " * len(m.group(0)), line)))
    return out


def _marker_lines(text: str) -> dict[int, tuple[int, str]]:
    """line index -> (column where the marker starts, marker name)."""
    found: dict[int, tuple[int, str]] = {}
    for i, line in _prose_lines(text):
        match = _AT_END.search(line)
        if match:
            found[i] = (match.start(1), match.group(2))
    return found


def parse(message: str) -> Markers:
    names = {name for _, name in _marker_lines(message).values()}
    return Markers(ready="ready" in names, exit="exit" in names)


def strip(message: str) -> str:
    """The message for display: the markers that counted removed, the rest untouched."""
    lines = message.splitlines()
    for i, (column, _) in _marker_lines(message).items():
        lines[i] = lines[i][:column].rstrip()
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)
