"""`autopilot-codex` on the user's PATH after an install: a link in a user bin folder that is
already on PATH (never a change to a shell's startup files), or the one line to add.

Loops run in any repository, and Codex's shell (the codex-plan skill) and the README call the
launcher by name; a launcher only reachable by its full path in the plugin is a trap.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

NAME = "autopilot-codex"
LAUNCHER = Path(__file__).resolve().parents[3] / "bin" / NAME
# User bin folders, the first one on PATH gets the link (the XDG one first).
USER_BIN_DIRS = (Path(".local") / "bin", Path("bin"))


def put_on_path(env: Mapping[str, str], launcher: Path = LAUNCHER) -> str:
    """One line: where `autopilot-codex` now resolves, what was linked, or what to add."""
    search = env.get("PATH", "")
    found = shutil.which(NAME, path=search)
    if found is not None and _same(Path(found), launcher):
        return f"  PATH: `{NAME}` is {found}"
    on_path = {os.path.normpath(d) for d in search.split(os.pathsep) if d}
    home = Path(env.get("HOME") or Path.home())
    for relative in USER_BIN_DIRS:
        folder = home / relative
        if os.path.normpath(folder) not in on_path or not folder.is_dir():
            continue
        link = folder / NAME
        if link.is_symlink() and not link.exists() and _ours(link):
            link.unlink()  # a link to a checkout that moved: it answers nothing
        if link.exists() or link.is_symlink():
            if _same(link, launcher):
                return f"  PATH: `{NAME}` is {link} (a link to {launcher})"
            continue
        try:
            link.symlink_to(launcher)
        except OSError:
            continue
        if found is None or _same(Path(found), launcher):
            return f"  PATH: linked {link} -> {launcher}, so `{NAME}` runs from any folder"
        return (
            f"  PATH: linked {link} -> {launcher}, but {found} comes first on PATH; "
            "remove that one to use this install"
        )
    if found is not None:
        return f"  PATH: `{NAME}` on your PATH is {found}, not this install ({launcher})"
    return (
        f"  PATH: `{NAME}` is not on your PATH. Add its folder in your shell's startup file "
        f'(export PATH="{launcher.parent}:$PATH"), or make ~/.local/bin, put it on PATH, and '
        "run this again to get a link there"
    )


def take_off_path(env: Mapping[str, str], launcher: Path = LAUNCHER) -> str:
    """`uninstall`: the link `put_on_path` made, removed when it is one to this launcher (a file
    of the user's own there is kept); one line."""
    home = Path(env.get("HOME") or Path.home())
    for relative in USER_BIN_DIRS:
        link = home / relative / NAME
        if link.is_symlink() and _same(link, launcher):
            link.unlink()
            return f"  PATH: removed the link {link}"
    return f"  PATH: no link to {launcher} in ~/.local/bin or ~/bin; nothing removed"


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # a link that loops: RuntimeError before Python 3.13
        return False


def _ours(link: Path) -> bool:
    """A link to some copy of this launcher (by its name in the plugin's bin/)."""
    return str(link.readlink()).endswith(f"{os.sep}bin{os.sep}{NAME}")
