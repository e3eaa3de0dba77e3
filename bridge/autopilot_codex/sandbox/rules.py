"""What one walled process of the supervisor may see, write and reach, as ordered mounts.

Everything is read-only; `writable` folders are writable again, `bound` ones (source, place)
are writable at their place with the source's content, `shown` ones readable again
even inside a hidden place, `sealed` paths inside a writable folder read-only again, `hidden`
paths neither readable nor listable, `fresh` folders empty and private (a tmpfs). Rules nest: the deeper path wins, so a work tree inside the state home stays
visible while the key file beside it stays hidden. Paths are taken as real paths (a link to a
credential store hides the store), and a path that does not exist is left out: there is
nothing to read there, and the read-only root keeps it from being made.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Kind = Literal["fresh", "write", "show", "seal", "hide"]
# At one depth: a fresh folder first, then what is written, shown, sealed, and hidden last.
_RANK: dict[Kind, int] = {"fresh": 0, "write": 1, "show": 2, "seal": 3, "hide": 4}


@dataclass(frozen=True)
class Rules:
    writable: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    sealed: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    fresh: tuple[str, ...] = ()
    network: bool = False
    bound: tuple[tuple[str, str], ...] = ()
    # Variables set inside the sandbox (a macOS profile cannot bind, so they do its part).
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Mount:
    """One step of the plan. `kind` "hide" on a folder is an empty tmpfs; on anything else,
    `folder` is False and the sandbox puts an unreadable file in its place. A "write" with a
    `source` binds that folder at `path`."""

    kind: Kind
    path: str
    folder: bool = True
    source: str = ""


def mounts(rules: Rules) -> list[Mount]:
    """The rules as mounts in the order to apply them, each one that changes nothing left out."""
    groups: tuple[tuple[Kind, tuple[str, ...]], ...] = (
        ("fresh", rules.fresh),
        ("write", rules.writable),
        ("show", rules.shown),
        ("seal", rules.sealed),
        ("hide", rules.hidden),
    )
    sources = {real: source for source, place in rules.bound for real in _real((place,), False)}
    wanted: dict[str, Kind] = dict.fromkeys(sources, "write")
    for kind, paths in groups:
        for path in _real(paths, kind == "fresh"):
            # The same path twice: the stricter rule (ranked later) holds.
            wanted[path] = kind
    order = sorted(wanted.items(), key=lambda item: (_depth(item[0]), _RANK[item[1]], item[0]))
    done: list[Mount] = []
    for path, kind in order:
        if _redundant(kind, _enclosing(done, path)):
            continue
        source = sources.get(path, "") if kind == "write" else ""
        done.append(Mount(kind, path, kind != "hide" or Path(path).is_dir(), source))
    return done


def _real(paths: Iterable[str], missing_too: bool) -> list[str]:
    """The real paths of those that exist (all of them with `missing_too`). Checked on every
    call, never cached: a credential store made a minute ago is hidden from the next call.
    `lstat` first: most of the places named do not exist, and it is the cheapest answer."""
    found = []
    for path in paths:
        if not path.startswith(os.sep):
            continue
        try:
            os.lstat(path)
        except OSError:
            if not missing_too:
                continue
        real = os.path.realpath(path)
        if missing_too or os.path.lexists(real):
            found.append(real)
    return found


def _depth(path: str) -> int:
    return 0 if path == os.sep else path.count(os.sep)


def _enclosing(done: list[Mount], path: str) -> Kind | None:
    """The kind of the nearest mount above `path`; None for the read-only root."""
    best: Mount | None = None
    for mount in done:
        if path.startswith(mount.path.rstrip(os.sep) + os.sep) and (
            best is None or len(mount.path) > len(best.path)
        ):
            best = mount
    return best.kind if best is not None else None


def _redundant(kind: Kind, above: Kind | None) -> bool:
    """Whether `kind` changes nothing under a mount of kind `above`: a path inside an empty
    folder is not there to hide, one inside a read-only place is read-only already, and a
    sealed path must not bring back what a hidden place above it hides."""
    if kind == "hide":
        return above in ("hide", "fresh")
    if kind == "show":
        return above in (None, "show", "seal")
    if kind == "seal":
        return above != "write"
    return False
