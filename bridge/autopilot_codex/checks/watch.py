"""The loop's own files while a user's check runs: a check that changes them is tampering.

A check runs code the implementer just wrote, as the same user, so it can write the loop's
config (`rails_allow: [".*"]`) or its state. Each check is bracketed: the watched files are
read before it starts and compared after it ends; a change the bridge cannot vouch for is put
back as it was, named in `tampered`, and the check fails.

Some writes are the bridge's own and may land while a check runs (the checks of an autopilot
verdict run without the lock: a background review may save the state meanwhile). The caller's
`excused` says which changes are those: an append to the ledger, a state the witness vouches
for. The strength of that excuse is the witness's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..fileio import atomic_write_bytes

# Every watched file's bytes (None: no such file).
Snapshot = dict[Path, "bytes | None"]
# (changed path, the snapshot before the check) -> the change is the bridge's own.
Excuse = Callable[[Path, Snapshot], bool]


def _never(_path: Path, _before: Snapshot) -> bool:
    return False


def read(path: Path) -> bytes | None:
    """A file's bytes for comparing; a link or an unreadable file as a text of its own."""
    try:
        if path.is_symlink():
            return b"symlink:" + str(path.readlink()).encode("utf-8", "surrogateescape")
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}".encode()


def _put_back(path: Path, data: bytes | None) -> None:
    """The file as it was: written whole through a rename (a link put there is replaced)."""
    if data is None:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            path.unlink()
        return
    atomic_write_bytes(path, data)


@dataclass
class Watch:
    files: Sequence[Path]
    excused: Excuse = _never
    # (check command, names of the files it changed), in the order the checks ran.
    tampered: list[tuple[str, list[str]]] = field(default_factory=list)

    def take(self) -> Snapshot:
        return {path: read(path) for path in self.files}

    def settle(self, command: str, before: Snapshot) -> list[str]:
        """Put back what the check changed; the names of those files (none: nothing changed).

        A file that is unreadable now was changed too (its mode, say): written back as well.
        """
        changed: list[str] = []
        for path, old in before.items():
            new = read(path)
            if new == old or self.excused(path, before):
                continue
            # A link or an unreadable file before: nothing to restore from; still a change.
            if old is None or not old.startswith((b"symlink:", b"unreadable: ")):
                with contextlib.suppress(OSError):
                    _put_back(path, old)
            changed.append(path.name)
        if changed:
            self.tampered.append((command, changed))
        return changed


def appended(old: bytes | None, new: bytes | None) -> bool:
    """An append-only file that only grew: its old bytes are still its first bytes."""
    return new is not None and (old is None or new.startswith(old))
