"""Read simple comma-separated records."""

from __future__ import annotations

from pathlib import Path


def parse_line(line: str) -> list[str]:
    fields = [""]
    quoted = False
    for char in line.rstrip("\r\n"):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            fields.append("")
        else:
            fields[-1] += char
    return fields


def parse_file(path: Path) -> list[list[str]]:
    return [parse_line(line) for line in path.read_text().splitlines() if line.strip()]
