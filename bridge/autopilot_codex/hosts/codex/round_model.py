"""The model a `codex exec` round runs, to price the tokens its stream reports: the command
line's `-m`/`--model`, else its `-c model=...`, else `model = ...` at the top of
`$CODEX_HOME/config.toml`; "" when none names one (Codex's own default, priced at the dearest
row). A profile's model (`--profile`) is not read: the top-level one, or the dearest row,
prices it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...codex_config import top_level

_OVERRIDE = re.compile(r"""^model\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))\s*$""")


def model_of(cmd: Sequence[str], environ: Mapping[str, str]) -> str:
    # The last word is the prompt, never a flag.
    return _flags(list(cmd[:-1])) or _configured(environ)


def _flags(words: list[str]) -> str:
    named, overridden = "", ""
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if word in ("-m", "--model"):
            named = following
        elif word.startswith("--model="):
            named = word.split("=", 1)[1]
        elif word.startswith("-m") and not word.startswith("--") and len(word) > 2:
            named = word[2:].lstrip("=")
        elif word in ("-c", "--config"):
            overridden = _override(following) or overridden
        elif word.startswith("--config="):
            overridden = _override(word.split("=", 1)[1]) or overridden
    return (named or overridden).strip()


def _override(value: str) -> str:
    found = _OVERRIDE.match(value.strip())
    return "" if found is None else next(g for g in found.groups() if g is not None)


def _configured(environ: Mapping[str, str]) -> str:
    configured = environ.get("CODEX_HOME", "").strip()
    home = Path(configured) if configured else Path(environ.get("HOME") or Path.home()) / ".codex"
    return top_level(home / "config.toml", "model")
