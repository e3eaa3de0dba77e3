"""Every clean/smudge/process filter the repository's config defines, blanked by name.

A filter's driver name is free, so it cannot be overridden the way `runner.OVERRIDES` are: the
drivers are read from the config first and each is given an empty command (`runner`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

_cache: dict[tuple[object, ...], tuple[tuple[str, str], ...]] = {}


def blanked(
    common_dir: Path, git_dir: Path, ask_git: Callable[[], list[str]]
) -> tuple[tuple[str, str], ...]:
    """Config pairs that blank every clean/smudge/process filter the repository defines.

    A driver runs only when the config defines it, and git ignores an empty command (1.x;
    `process` 2.11, `required` 1.7.5). Drivers are found in Python from the config files'
    section headers; when a file includes another, or a `[filter` in it is not a header this
    reading understands, git itself lists them (one more call, kept while the files' stats
    hold). Overriding a name too many is harmless; missing one is not, hence the fallback.
    """
    files = [common_dir / "config", git_dir / "config.worktree"]
    stamp: list[object] = [common_dir]
    names: list[str] | None = []
    for file in files:
        try:
            info = file.stat()
            data = file.read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            continue
        stamp += [str(file), info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]
        found = _headers(data)
        if found is None or names is None:
            names = None
        else:
            names += found
    if names is None:
        key = tuple(stamp)
        if key not in _cache:
            _cache[key] = _blank(ask_git())
        return _cache[key]
    return _blank(names)


_FILTER_START = re.compile(r"\[\s*filter", re.IGNORECASE)
_FILTER_HEADER = re.compile(
    r'\[\s*filter(?:\s+"((?:[^"\\\n]|\\.)*)"|\.([^\]\s]*))\s*\]', re.IGNORECASE
)


def _headers(text: str) -> list[str] | None:
    """Filter driver names from one config file's headers; None to ask git instead."""
    if "include" in text.lower():
        return None
    headers = list(_FILTER_HEADER.finditer(text))
    if len(headers) != len(_FILTER_START.findall(text)):
        return None  # a `[filter` this reading does not understand
    names: list[str] = []
    for match in headers:
        quoted, dotted = match.group(1), match.group(2)
        if quoted is not None:
            names.append(re.sub(r"\\(.)", r"\1", quoted))
        else:
            # The old `[filter.Name]` spelling: git folds the name to lower case.
            names += [dotted, dotted.lower()]
    return names


def _blank(names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    fields = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))
    unique = dict.fromkeys(names)
    return tuple((f"filter.{name}.{field}", value) for name in unique for field, value in fields)
