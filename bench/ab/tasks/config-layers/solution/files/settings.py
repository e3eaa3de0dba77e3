"""The application's settings: a file, the environment and command-line overrides."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

ENV_PREFIX = "APP_"


def _pair(text: str, where: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"{where}: expected key = value, got {text!r}")
    return key.strip().lower(), value.strip()


def read_file(path: Path) -> dict[str, str]:
    settings: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, value = _pair(line, f"{path} line {number}")
        settings[key] = value
    return settings


def read_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        name[len(ENV_PREFIX):].lower(): value
        for name, value in environ.items()
        if name.startswith(ENV_PREFIX)
    }


def load(path: Path, environ: Mapping[str, str], overrides: Iterable[str]) -> dict[str, str]:
    settings = read_file(path) if path.exists() else {}
    settings.update(read_env(environ))
    settings.update(_pair(item, "override") for item in overrides)
    return settings
