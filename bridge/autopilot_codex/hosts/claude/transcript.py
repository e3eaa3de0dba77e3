"""The implementer's spend as Claude Code records it: the session transcript (JSONL, its path
in every hook payload as `transcript_path`), one line per message part, each assistant line
carrying the message's `model` and `usage` (input, output, cache read and cache creation
tokens).

Read incrementally: only the bytes after the offset kept in the loop's state, and only whole
lines (a line the host is still writing is read next time), so a hook's cost does not grow
with the transcript. Claude Code writes one message's usage on several lines (one per content
block), so a message id counts once; the last ids seen are kept for a message split across two
reads. Standard library only: the hook path imports it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from typing import Any

from ..protocol import SpendRead
from .prices import Price, price_of

# Message ids remembered across reads: duplicates are written next to each other.
SEEN_KEPT = 32
# Read in chunks, so a first look at a large transcript never holds it all in memory.
CHUNK = 1 << 20


class TranscriptReader:
    def read(
        self, path: str, offset: int, seen: Sequence[str], since: str, prices: Any = None
    ) -> SpendRead:
        own: Mapping[str, Price] | None = prices if isinstance(prices, Mapping) else None
        recent = list(seen)
        usd, tokens, unknown = 0.0, 0, set[str]()
        try:
            # No link followed, no FIFO waited on: only a regular file is read.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return SpendRead(offset, tuple(recent))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return SpendRead(offset, tuple(recent))
            if info.st_size < offset:
                offset = 0  # a new file under the old name: read it from its start
            handle.seek(offset)
            rest = b""
            while True:
                chunk = handle.read(CHUNK)
                if not chunk:
                    break
                data = rest + chunk
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                for line in data[:cut].splitlines():
                    found = _usage(line, since)
                    if found is None:
                        continue
                    message_id, model, counts = found
                    if message_id:
                        if message_id in recent:
                            continue
                        recent = (recent + [message_id])[-SEEN_KEPT:]
                    price, known = price_of(model, own)
                    if not known:
                        unknown.add(model or "(no model)")
                    usd += price.usd(*counts)
                    tokens += sum(counts)
                offset += cut
        return SpendRead(offset, tuple(recent), usd, tokens, tuple(sorted(unknown)))


def _usage(line: bytes, since: str) -> tuple[str, str, tuple[int, int, int, int]] | None:
    """(message id, model, (input, output, cache read, cache write)) of an assistant line at or
    after `since`, None for any other line."""
    if b'"usage"' not in line:
        return None  # most lines are tool results and user turns: skip them unparsed
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("type") != "assistant":
        return None
    stamp = record.get("timestamp")
    if since and isinstance(stamp, str) and stamp[:19] < since[:19]:
        return None  # before the loop started: not the loop's spend
    message = record.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(usage, dict):
        return None
    counts = tuple(
        _count(usage.get(k))
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    )
    message_id = message.get("id")
    model = message.get("model")
    return (
        message_id if isinstance(message_id, str) else "",
        model if isinstance(model, str) else "",
        (counts[0], counts[1], counts[2], counts[3]),
    )


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value
