"""Reading a host's own record of its spend (a JSONL file the host appends to) from where the
last look stopped, and noticing when it was rewritten under the reader.

The implementer runs as the same user as the host, so it can edit the host's record: cut it
short, or rewrite what was already read. Neither can lower the meter (the spend already counted
is kept: a reader only ever adds), and both are noticed: a file shorter than the last offset,
or whose bytes already read no longer match their digest, is reported as tampered. The digest
covers the record's first bytes and the bytes just before the offset, so checking it costs the
same for a 2 KB record as for a 200 MB one.

Only whole lines are handed on (a line the host is still writing is read next time); no link
is followed and no FIFO waited on. Standard library only: the hook path imports it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

# Bytes of the record's start, and of its end before the offset, that the digest covers.
DIGEST_SPAN = 4096
# Read in chunks, so a first look at a large record never holds it all in memory.
CHUNK = 1 << 20


@dataclass(frozen=True)
class Scanned:
    """Where this look stopped, the digest of what was read, and why the record looked
    tampered with ("" when it did not); `reread`: the record was read again from its start."""

    offset: int
    head: str
    tampered: str = ""
    reread: bool = False


def scan(
    path: str,
    offset: int,
    head: str,
    on_line: Callable[[bytes], None],
    on_reread: Callable[[], None] | None = None,
    needles: tuple[bytes, ...] = (),
) -> Scanned | None:
    """Hand `on_line` each whole line after `offset` (only those holding one of `needles`,
    when given, found without splitting the rest); None when there is no regular file to read
    (gone, a link, a FIFO), which changes nothing. `on_reread` is told, before the first line,
    that a record cut short is being read again from its start."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    # Checked on the descriptor, before it becomes a file object: Python refuses to wrap a
    # folder's descriptor (IsADirectoryError), and a payload may name a folder.
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        tampered, reread = "", False
        if info.st_size == offset and offset:
            return Scanned(offset, head)  # nothing new: checked when it next grows
        if info.st_size < offset:
            # Cut short: what is there now is read from its start. Lines written after the cut
            # count; what was left of the old lines may count twice, never less than once.
            tampered = f"cut short ({info.st_size} bytes, {offset} already read)"
            offset, reread = 0, True
            if on_reread is not None:
                on_reread()
        elif head and offset and _digest(handle, offset) != head:
            tampered = "rewritten before the point already read"
        handle.seek(offset)
        rest = b""
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            for line in _lines(data[:cut], needles):
                on_line(line)
            offset += cut
        return Scanned(offset, _digest(handle, offset) if offset else "", tampered, reread)


def _lines(block: bytes, needles: tuple[bytes, ...]) -> list[bytes]:
    """The block's lines, or only those holding a needle, in order: most lines of a large
    record hold none, and searching the block is much cheaper than splitting it."""
    if not needles:
        return block.splitlines()
    starts: set[int] = set()
    for needle in needles:
        at = block.find(needle)
        while at >= 0:
            start = block.rfind(b"\n", 0, at) + 1
            starts.add(start)
            end = block.find(b"\n", at)
            at = block.find(needle, end)
    return [block[start : block.find(b"\n", start)] for start in sorted(starts)]


def _digest(handle: IO[bytes], offset: int) -> str:
    """sha256 of the first bytes and the last bytes before `offset`, short hex."""
    digest = hashlib.sha256(str(offset).encode())
    handle.seek(0)
    digest.update(handle.read(min(DIGEST_SPAN, offset)))
    start = max(0, offset - DIGEST_SPAN)
    handle.seek(start)
    digest.update(handle.read(offset - start))
    return digest.hexdigest()[:32]
