"""Read simple comma-separated records."""

from __future__ import annotations

from pathlib import Path


def parse_line(line: str) -> list[str]:
    return line.rstrip("\r\n").split(",")


def parse_file(path: Path) -> list[list[str]]:
    return [parse_line(line) for line in path.read_text().splitlines() if line.strip()]
