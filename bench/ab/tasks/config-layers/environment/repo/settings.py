"""The application's settings: a file, the environment and command-line overrides."""

from __future__ import annotations

from pathlib import Path


def read_file(path: Path) -> dict[str, str]:
    raise NotImplementedError
