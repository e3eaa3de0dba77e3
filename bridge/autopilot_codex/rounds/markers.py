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
_RUN = re.compile(r"`+")
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
        out.append((i, _blank_spans(line)))
    return out


def _blank_spans(line: str) -> str:
    """The line with each inline code span blanked, as `re.sub(r"(`+).*?\\1", spaces, line)`
    would, in one pass over its runs of backticks: that pattern tries every length of a run at
    every start, the cube of a long run's length, and the line is the implementer's.

    From a backtick starting a run of r (what is left of it), the pattern takes the longest
    k <= r whose k backticks come again after the first k: k = r when a later run is as long,
    else the longest later run if it is over r/2, else r // 2 inside the run itself. A lone
    backtick with none after it opens nothing."""
    runs = [(m.start(), m.end()) for m in _RUN.finditer(line)]
    longest = [0] * (len(runs) + 1)  # the longest run from each index on
    for x in range(len(runs) - 1, -1, -1):
        longest[x] = max(longest[x + 1], runs[x][1] - runs[x][0])
    blanked: list[tuple[int, int]] = []
    x, at = 0, runs[0][0] if runs else 0
    while x < len(runs):
        later, r = longest[x + 1], runs[x][1] - at
        if 2 * later > r:
            k = min(r, later)
            x += 1
            while runs[x][1] - runs[x][0] < k:
                x += 1
            end = runs[x][0] + k
        elif r >= 2:
            end = at + 2 * (r // 2)
        else:
            break  # a lone backtick and none after it
        blanked.append((at, end))
        if end == runs[x][1]:
            x += 1
            end = runs[x][0] if x < len(runs) else end
        at = end
    pieces, done = [], 0
    for start, end in blanked:
        pieces += [line[done:start], " " * (end - start)]
        done = end
    return "".join(pieces) + line[done:]


def _marker_lines(text: str) -> dict[int, tuple[int, str]]:
    """line index -> (column where the marker starts, marker name)."""
    matches = ((i, _AT_END.search(line)) for i, line in _prose_lines(text))
    return {i: (m.start(1), m.group(2)) for i, m in matches if m}


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
