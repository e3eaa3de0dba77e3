"""What a project's install record (`.codex/autopilot-codex-install.json`) may name before
`uninstall` (and a reinstall, which undoes the last install first) acts on it.

The record lives in the work tree, which a repository (or an unguarded implementer) can fill
with one naming the user's folders, settings or trust: it is believed only when every path it
names is one this install writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# The name every skill folder the install copies starts with.
SKILL_PREFIX = "autopilot-codex-"


def believed(manifest: Any, hooks_file: Path, skills_dir: Path, config_file: Path) -> bool:
    ours = (hooks_file, skills_dir, config_file.parent)
    places = {p for place in ours for p in (place, *place.parents)}
    record = manifest if isinstance(manifest, dict) else {}
    names = ("skills", "created_dirs", "trust_keys")
    lists = skills, dirs, keys = [record.get(name, []) for name in names]
    return (
        all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in lists)
        and record.get("hooks_file") == str(hooks_file)
        and record.get("config_file", str(config_file)) == str(config_file)
        and all(Path(s).parent == skills_dir for s in skills)
        and all(Path(s).name.startswith(SKILL_PREFIX) for s in skills)
        and all(Path(d) in places for d in dirs)
        and all(k.startswith(f"{hooks_file}:") for k in keys)
    )
