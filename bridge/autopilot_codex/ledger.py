"""The event ledger, `events.jsonl`: append-only, every line sealed and chained.

Each line is a JSON object whose last field, `mac`, is the keyed digest of the line before it
(its `mac`) and of this line's own text without the field: a line the bridge did not write has
no valid `mac`, and a line changed, removed or moved breaks the chain after it. The witness
keeps an `Anchor` (where the ledger ended and the `mac` there) at every state write, so a
ledger cut short or rewritten before that point is noticed too.

Appends take the ledger's own lock (one `flock` on the file), so parallel hooks chain in turn
and never interleave; the lock is held for one read of the last line and one write.
"""

from __future__ import annotations

import hmac
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from . import regular

_FIELD = b', "mac": "'
_HEX = 64
_SUFFIX = len(_FIELD) + _HEX + 2  # the field, the digest, the closing quote and brace
_CHUNK = 8192
REPLAYED = "witness.json is older than the ledger (an earlier copy was put back)"


class Anchor(NamedTuple):
    """The ledger's length in bytes and the `mac` of its last line when the bridge looked."""

    size: int = 0
    mac: str = ""


def append(path: Path, key: bytes, record: dict[str, Any]) -> None:
    body = json.dumps(record, ensure_ascii=False, default=str).encode("utf-8", "surrogateescape")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = regular.opened(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        _lock(fd, exclusive=True)
        size = os.fstat(fd).st_size
        previous = _mac_of(_line_ending_at(fd, size)) if size else ""
        os.write(fd, _sealed(key, previous.encode("ascii"), body) + b"\n")
    finally:
        os.close(fd)  # closing drops the lock


def verify(
    path: Path, key: bytes, anchor: Anchor, serial: int | None = None
) -> tuple[Anchor, str | None]:
    """Where the ledger verifiably ends now, and what is wrong with it (None: nothing).

    Only what follows the anchor is read, and the line the anchor ends on: a hook pays for the
    lines written since the last state write, not for the whole history. With `serial` (the
    witness's), a line written under a later witness than this one is a problem too: the
    witness was put back from an older copy.
    """
    try:
        fd = regular.opened(path)
    except FileNotFoundError:
        if anchor.size:
            return anchor, "events.jsonl was removed"
        return anchor, None
    except OSError as exc:
        return anchor, f"events.jsonl is unreadable ({exc.strerror})"
    try:
        _lock(fd, exclusive=False)
        size = os.fstat(fd).st_size
        if size < anchor.size:
            return anchor, f"events.jsonl was cut short ({size} of {anchor.size} bytes)"
        if anchor.size and _mac_of(_line_ending_at(fd, anchor.size)) != anchor.mac:
            return anchor, "events.jsonl was rewritten"
        rest = os.pread(fd, size - anchor.size, anchor.size)
    finally:
        os.close(fd)
    position, previous = anchor.size, anchor.mac
    lines = rest.split(b"\n")
    if lines[-1]:
        return anchor, "events.jsonl ends in a line the bridge did not write"
    for raw in lines[:-1]:
        mac = _mac_of(raw)
        expected = _seal(key, previous.encode("ascii") + _body_of(raw))
        if not mac or not hmac.compare_digest(mac, expected):
            return Anchor(position, previous), "events.jsonl holds a line the bridge did not write"
        if serial is not None and _serial_of(raw) > serial:
            return Anchor(position, previous), REPLAYED
        position, previous = position + len(raw) + 1, mac
    return Anchor(position, previous), None


def audit(path: Path, key: bytes, origin: Anchor, anchor: Anchor) -> str | None:
    """The whole history since `origin`, line by line: what the per-hook check (`verify`,
    from the last anchor on) cannot see, a line rewritten before the anchor. For the user's
    `resume`, not for every hook."""
    try:
        data = regular.read(path)
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        return f"events.jsonl is unreadable ({exc.strerror})"
    if len(data) < max(origin.size, anchor.size):
        return f"events.jsonl was cut short ({len(data)} of {anchor.size} bytes)"
    position, previous = origin.size, origin.mac
    for raw in data[origin.size :].split(b"\n")[:-1]:
        mac = _mac_of(raw)
        if not mac or not hmac.compare_digest(mac, _seal(key, previous.encode("ascii") + _body_of(raw))):
            return f"events.jsonl was rewritten (at byte {position})"
        position, previous = position + len(raw) + 1, mac
        if position == anchor.size and mac != anchor.mac:
            return f"events.jsonl was rewritten (at byte {position})"
    return None


def end(path: Path) -> Anchor:
    """Where the ledger ends now, unverified: the anchor of a loop taken over from a release
    that did not seal its lines (from here on, every line must be sealed)."""
    try:
        fd = regular.opened(path)
    except FileNotFoundError:
        return Anchor()
    try:
        _lock(fd, exclusive=False)
        size = os.fstat(fd).st_size
        return Anchor(size, _mac_of(_line_ending_at(fd, size)) if size else "")
    finally:
        os.close(fd)


def newest(path: Path, anchor: Anchor) -> dict[str, float]:
    """The highest spend, iteration and witness serial the sealed lines after `anchor` name:
    what a loop whose state and witness were put back from an older copy had reached."""
    found = {"budget_used_usd": 0.0, "iteration": 0.0, "witness": 0.0}
    try:
        with os.fdopen(regular.opened(path), "rb") as handle:
            handle.seek(anchor.size)
            rest = handle.read()
    except OSError:
        return found
    for raw in rest.split(b"\n"):
        if not _mac_of(raw):
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        for name in found:
            value = record.get(name) if isinstance(record, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[name] = max(found[name], float(value))
    return found


def _serial_of(line: bytes) -> int:
    try:
        value = json.loads(_body_of(line)).get("witness", 0)
    except (ValueError, AttributeError):
        return 0
    return value if isinstance(value, int) else 0


def _sealed(key: bytes, previous: bytes, body: bytes) -> bytes:
    mac = _seal(key, previous + body).encode("ascii")
    return body[:-1] + _FIELD + mac + b'"}'


def _seal(key: bytes, data: bytes) -> str:
    # The one-shot digest: a few times faster than an hmac object, for the line-by-line check.
    return hmac.digest(key, data, "sha256").hex()


def _mac_of(line: bytes) -> str:
    """The line's `mac` ("" when it has none: a line from before the ledger was sealed)."""
    tail = line[-_SUFFIX:]
    if len(line) <= _SUFFIX or not tail.startswith(_FIELD) or not tail.endswith(b'"}'):
        return ""
    mac = tail[len(_FIELD) : -2]
    try:
        return mac.decode("ascii")
    except UnicodeDecodeError:
        return ""


def _body_of(line: bytes) -> bytes:
    return line[:-_SUFFIX] + b"}"


def _line_ending_at(fd: int, end: int) -> bytes:
    """The line whose newline is the byte before `end`, newline left off."""
    start = end - 1
    found = b""
    while start > 0:
        begin = max(0, start - _CHUNK)
        chunk = os.pread(fd, start - begin, begin)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return chunk[cut + 1 :] + found
        found = chunk + found
        start = begin
    return found


try:
    import fcntl

    def _lock(fd: int, *, exclusive: bool) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)

except ImportError:  # pragma: no cover - Windows: appends are single writes there

    def _lock(fd: int, *, exclusive: bool) -> None:
        return None
