"""Read simple comma-separated records (RFC 4180 quoting, one record a line)."""

from __future__ import annotations

import csv
from pathlib import Path


def parse_line(line: str) -> list[str]:
    text = line.rstrip("\r\n")
    if not text:
        return [""]
    return next(csv.reader([text]))


def parse_file(path: Path) -> list[list[str]]:
    return [parse_line(line) for line in path.read_text().splitlines() if line.strip()]
