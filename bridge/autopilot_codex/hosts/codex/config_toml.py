"""A top-level setting of Codex's `config.toml` (the model, the model provider), read where
the manager's backend, the rounds' pricing and `doctor` need one.

Only the string keys above the first table count: a table's `model` (a profile's, a
provider's) is not the default. Python 3.10 has no tomllib, and nothing here needs more.
"""

from __future__ import annotations

import re
from pathlib import Path


def top_level(config: Path, key: str) -> str:
    """The key's string value, or "" (no file, an unreadable one, or no such key)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    pattern = re.compile(rf"""^\s*{re.escape(key)}\s*=\s*(?:"([^"]*)"|'([^']*)')""")
    for line in text.splitlines():
        if line.lstrip().startswith("["):
            break
        if found := pattern.match(line):
            return (found.group(1) or found.group(2) or "").strip()
    return ""
