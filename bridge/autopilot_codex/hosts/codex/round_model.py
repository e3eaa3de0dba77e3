"""The model a `codex exec` round runs, to price the tokens its stream reports, in Codex's own
order: the command line's `-m`/`--model`; else the model of the profile in use (`-p`/`--profile`,
else `-c profile=...`, else `profile = ...` in `$CODEX_HOME/config.toml`) from that file's
`[profiles.<name>]`; else a `-c model=...`; else the file's top-level `model`. "" when none
names one (Codex's own default, priced at the dearest row).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib

_OVERRIDE = re.compile(r"""^(model|profile)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))\s*$""")


@dataclass
class _Flags:
    model: str = ""
    profile: str = ""
    overrides: dict[str, str] | None = None


def model_of(cmd: Sequence[str], environ: Mapping[str, str]) -> str:
    # The last word is the prompt, never a flag.
    flags = _flags(list(cmd[:-1]))
    if flags.model:
        return flags.model
    config = _config(environ)
    overrides = flags.overrides or {}
    profile = flags.profile or overrides.get("profile", "") or _text(config.get("profile"))
    profiles = config.get("profiles")
    if profile and isinstance(profiles, dict):
        chosen = profiles.get(profile)
        if isinstance(chosen, dict) and _text(chosen.get("model")):
            return _text(chosen.get("model"))
    return overrides.get("model", "") or _text(config.get("model"))


def _flags(words: list[str]) -> _Flags:
    found = _Flags(overrides={})
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if word in ("-m", "--model"):
            found.model = following.strip()
        elif word.startswith("--model="):
            found.model = word.split("=", 1)[1].strip()
        elif word.startswith("-m") and not word.startswith("--") and len(word) > 2:
            found.model = word[2:].lstrip("=").strip()
        elif word in ("-p", "--profile"):
            found.profile = following.strip()
        elif word.startswith("--profile="):
            found.profile = word.split("=", 1)[1].strip()
        elif word in ("-c", "--config"):
            _override(following, found)
        elif word.startswith("--config="):
            _override(word.split("=", 1)[1], found)
    return found


def _override(value: str, into: _Flags) -> None:
    matched = _OVERRIDE.match(value.strip())
    if matched is not None and into.overrides is not None:
        key, *values = matched.groups()
        into.overrides[key] = next(v for v in values if v is not None).strip()


def _config(environ: Mapping[str, str]) -> dict[str, Any]:
    """`config.toml`, or {} when it is missing, unreadable or not TOML (Codex would refuse to
    start on the last; the round's own error says so)."""
    configured = environ.get("CODEX_HOME", "").strip()
    home = Path(configured) if configured else Path(environ.get("HOME") or Path.home()) / ".codex"
    try:
        with (home / "config.toml").open("rb") as file:
            return tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
