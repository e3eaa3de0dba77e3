"""The first thing a hook runs: decide, with `os`, `sys` and the C JSON scanner only, whether this hook
has anything to do. Most hooks fire in sessions with no loop in their worktree, and those
must cost no more than starting the interpreter.
"""

from __future__ import annotations

import os
import sys

from .paths import find_worktree_str, state_home_str

# typing.TYPE_CHECKING without importing typing on every hook (mypy reads the name the same way)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .admitted import Admitted

# A hook payload carries at most a file's content; anything larger is cut before parsing.
MAX_STDIN_BYTES = 32 * 1024 * 1024


def hook_main(argv: list[str]) -> int:
    """`hook <event> --host <host>`: the gate, then the engine only if a loop here cares.

    Always exit 0: even a broken install must not break the host's session.
    """
    try:
        admitted = admit(read_stdin())
        if admitted is None:
            return 0
        _late_site()
        from .hookrun import run_hook
    except Exception as exc:  # noqa: BLE001
        sys.stderr.write(f"autopilot-codex: hook skipped ({type(exc).__name__}: {exc})\n")
        return 0
    return run_hook(argv, admitted)


def _late_site() -> None:
    """The launcher starts hooks without `site` (python -S): the gate needs only the stdlib,
    and most hooks end there. A hook that reaches the engine needs the environment's packages:
    load `site` now, as a normal start would have."""
    if "site" not in sys.modules:
        import site

        site.main()


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


def read_stdin() -> bytes:
    try:
        return sys.stdin.buffer.read(MAX_STDIN_BYTES)
    except (OSError, ValueError):
        return b""


def admit(raw: bytes) -> Admitted | None:
    """None when no running loop can care about this payload (the silent allow)."""
    try:
        data = loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # deep nesting: RecursionError
        data = None
    cwd = data.get("cwd") if isinstance(data, dict) else None
    session = data.get("session_id") if isinstance(data, dict) else None
    worktree = find_worktree_str(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if worktree is None:
        return None
    marker = _marker_for(worktree)
    if marker is None:
        return None
    owner = marker.get("session_id")
    # A driver-owned loop (rounds) starts a fresh session per round: every session is admitted.
    if marker.get("owner") == "driver":
        owner = None
    if isinstance(owner, str) and owner and isinstance(session, str) and session != owner:
        return None
    style = marker.get("style")
    from .admitted import Admitted  # only a hook that reached a loop pays for its module

    return Admitted(raw, worktree, style if isinstance(style, str) and style else "autopilot")


def _marker_for(worktree: str) -> dict[str, object] | None:
    """The marker of a running loop in this worktree (worktree, session_id, style, owner).

    Markers are read by content (there are a handful at most), so no key is hashed here; a
    damaged marker falls back to the key, and the engine then reads the real state.
    """
    active = os.path.join(state_home_str(), "active")
    try:
        names = os.listdir(active)
    except OSError:
        return None
    damaged = False
    for name in names:
        if name.startswith("."):
            continue
        try:
            with open(os.path.join(active, name), "rb") as handle:
                marker = loads(handle.read())
        except (OSError, ValueError):
            damaged = True
            continue
        if isinstance(marker, dict) and marker.get("worktree") == worktree:
            return marker
        damaged = damaged or not isinstance(marker, dict)
    if damaged:
        from .paths import project_key

        if os.path.exists(os.path.join(active, project_key(worktree))):
            return {}
    return None
