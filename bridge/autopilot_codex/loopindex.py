"""Which guarded loop holds a path: the two indexes of loop markers in the state home, read
with `os` and the C JSON scanner only. The idle-hook gate asks this for every hook, and a
command asks it to find the loop of the folder it was typed in.
"""

from __future__ import annotations

import os

from . import regular
from .paths import INDEXES, state_home_str, within


class _Scanning:
    """The settings `json.loads` gives the C scanner by default."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity


def loads(raw: bytes) -> object:
    """`json.loads` for the gate, without importing `json`: its import pulls in `re`, `enum`
    and `functools`, which cost an idle hook more than the rest of its work. The C scanner
    `json` itself uses does the parsing; anything unusual (no C scanner, not UTF-8, trailing
    data) goes to `json.loads`, so the answer is always the one `json.loads` would give."""
    try:
        from _json import make_scanner

        text = raw.decode("utf-8")
    except (ImportError, UnicodeDecodeError):
        import json

        return json.loads(raw)
    start = len(text) - len(text.lstrip(" \t\n\r"))
    try:
        # typeshed types the context as the scanner itself; any object with these fields works.
        value, end = make_scanner(_Scanning())(text, start)  # type: ignore[arg-type]
    except StopIteration:
        end = -1
    if end < 0 or text[end:].strip(" \t\n\r"):
        # Not a plain document (a BOM, garbage, trailing data): json.loads decides, and raises.
        import json

        return json.loads(raw)
    return value


def _scan(home: str) -> dict[str, list[object]]:
    """Every marker name in the two indexes, with the parsed copies found (None: unreadable)."""
    seen: dict[str, list[object]] = {}
    for index in INDEXES:
        folder = os.path.join(home, index)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith("."):
                continue
            try:
                marker: object = loads(regular.read(os.path.join(folder, name)))
            except (OSError, ValueError, RecursionError):
                marker = None
            seen.setdefault(name, []).append(marker)
    return seen


def payload_field(data: object, names: tuple[str, ...]) -> object:
    """The first of `names` the payload carries; None when it carries none (or is no object)."""
    return next((data[n] for n in names if n in data), None) if isinstance(data, dict) else None


def locate(
    raw: bytes, fields: tuple[tuple[str, ...], tuple[str, ...]]
) -> tuple[object, tuple[str, dict[str, object], bool] | None]:
    """The payload's session (`fields`: the names of the session's field, then the folder's)
    and the loop that holds its folder (`find_loop`; the process's own folder when the
    payload names none): the gate's one look at the payload and the index."""
    try:
        data = loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # deep nesting: RecursionError
        data = None
    session, cwd = payload_field(data, fields[0]), payload_field(data, fields[1])
    try:
        real = os.path.realpath(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    except (OSError, ValueError):  # NUL bytes, lone surrogates, a removed cwd
        return session, None
    return session, find_loop(real)


def find_loop(real: str) -> tuple[str, dict[str, object], bool] | None:
    """The guarded loop whose worktree contains `real`: (worktree, marker, needs repair).

    Markers are not authenticated (without the wall the implementer can write the index): a
    pair in both indexes wins over a single copy, and the engine repairs only a loop it ran.

    Markers are read by content (there are a handful at most), so no key is hashed on the
    common path. A marker present in one index only, or different in the two, still guards
    its worktree and asks for repair; a damaged one falls back to the keys of `real`'s
    ancestors, and the engine then reads the real state.
    """
    seen = _scan(state_home_str())
    best: tuple[str, dict[str, object], bool] | None = None
    damaged = False
    for copies in seen.values():
        repair = len(copies) != len(INDEXES) or any(c != copies[0] for c in copies)
        for marker in copies:
            if not isinstance(marker, dict):
                damaged = True
                continue
            root = marker.get("worktree")
            if isinstance(root, str) and root and within(real, root):
                # A worktree removed from disk guards nothing (a late hook from it is a no-op).
                # A marker in both indexes beats one in a single index (a planted marker for a
                # subfolder must not shadow the real loop); then the deepest worktree wins,
                # also between two copies of one marker that disagree (whichever index).
                better = best is None or (not repair, len(root)) > (not best[2], len(best[0]))
                if better and os.path.isdir(root):
                    best = (root, marker, repair)
    if best is not None or not damaged:
        return best
    from .paths import project_key

    here = real
    while True:
        if project_key(here) in seen:
            return here, {}, True
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
