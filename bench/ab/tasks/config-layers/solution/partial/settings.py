"""The application's settings: a file, the environment and command-line overrides."""

from __future__ import annotations

from pathlib import Path


def read_file(path: Path) -> dict[str, str]:
    settings: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        settings[key.strip().lower()] = value.strip()
    return settings
