"""The implementer's spend as Claude Code records it: the session transcript (JSONL, its path
in every hook payload as `transcript_path`), one line per message part, each assistant line
carrying the message's `model` and `usage` (input, output, cache read and cache creation
tokens), and where the host priced the message itself, its `costUSD`: that figure is taken as
it is; only a message without one is priced by the table (`prices`).

Read incrementally (`spendfile`): only the bytes after the offset kept in the loop's state, and
only whole lines, so a hook's cost does not grow with the transcript. Claude Code writes one
message's usage on several lines (one per content block), so a message id counts once; the last
ids seen are kept for a message split across two reads. Subagents and background tasks write
records of their own beside the session's (`related`), read the same way. Standard library
only: the hook path imports it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ... import surrogates
from ...host import SpendRead
from ...prices import count
from ..spendfile import scan
from .prices import Price, price_of

# The token kinds of a message's `usage`, in the order its price takes them.
TOKEN_KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)

# Message ids remembered across reads: duplicates are written next to each other.
SEEN_KEPT = 4
# Subagent records looked at per hook at most, so a folder filled with files cannot make every
# hook slow without end; one that has not grown since the last look costs a stat.
SUBAGENTS_KEPT = 4096


class TranscriptReader:
    def read(
        self, path: str, last: SpendRead, since: str, prices: Any = None, model: str = ""
    ) -> SpendRead:
        # Each line names its own model: a line the implementer appends only adds spend, so
        # the payload's model is not needed here.
        own: Mapping[str, Price] | None = prices if isinstance(prices, Mapping) else None
        recent = list(last.seen)
        usd, tokens, unknown = 0.0, 0, set[str]()

        def on_line(line: bytes) -> None:
            nonlocal recent, usd, tokens
            found = _usage(line, since)
            if found is None:
                return
            message_id, model, counts, cost = found
            if message_id:
                if message_id in recent:
                    return
                recent = (recent + [message_id])[-SEEN_KEPT:]
            tokens += sum(counts)
            # The host's own figure where it wrote one; the user's own row still comes first
            # (a plan user's "free"), the table only where neither says.
            if cost is not None and not any(model.startswith(p) for p in own or {}):
                usd += cost
                return
            price, known = price_of(model, own)
            if not known:
                unknown.add(model or "(no model)")
            usd += price.usd(*counts)

        got = scan(path, last.offset, last.head, on_line, needles=(b'"usage"',))
        if got is None:
            return replace(last, usd=0.0, tokens=0, unknown=(), tampered="")
        return SpendRead(
            got.offset,
            tuple(recent),
            usd,
            tokens,
            tuple(sorted(unknown)),
            head=got.head,
            tampered=got.tampered,
        )

    def related(self, path: str, after: float) -> list[str]:
        """Claude Code writes each subagent's messages, foreground or background, to a record
        of its own beside the session's: `<session>/subagents/agent-<id>.jsonl`."""
        if not path.endswith(".jsonl"):
            return []
        folder = path[: -len(".jsonl")] + "/subagents"
        try:
            with os.scandir(folder) as entries:
                names = sorted(
                    e.name
                    for e in entries
                    if e.name.startswith("agent-") and e.name.endswith(".jsonl")
                )
        except OSError:
            return []
        return [f"{folder}/{name}" for name in names[:SUBAGENTS_KEPT]]


def _usage(
    line: bytes, since: str
) -> tuple[str, str, tuple[int, int, int, int], float | None] | None:
    """(message id, model, (input, output, cache read, cache write), the host's own cost) of
    an assistant line at or after `since`, None for any other line. The cost is the line's
    `costUSD` where Claude Code wrote one, None where it did not."""
    if b'"usage"' not in line:
        return None  # most lines are tool results and user turns: skip them unparsed
    try:
        record = surrogates.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("type") != "assistant":
        return None
    stamp = record.get("timestamp")
    if since and isinstance(stamp, str) and stamp[:19] < since[:19]:
        return None  # before the loop started: not the loop's spend
    found = message_usage(record)
    return None if found is None else (*found, _cost(record.get("costUSD")))


def message_usage(record: Mapping[str, Any]) -> tuple[str, str, tuple[int, int, int, int]] | None:
    """(message id, model, (input, output, cache read, cache write)) of an assistant record
    carrying usage, as the transcript and a headless round's stream both write it; None for
    any other record."""
    message = record.get("message") if record.get("type") == "assistant" else None
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(usage, dict):
        return None
    counts = [count(usage.get(k)) for k in TOKEN_KINDS]
    message_id, model = message.get("id"), message.get("model")
    return (
        message_id if isinstance(message_id, str) else "",
        model if isinstance(model, str) else "",
        (counts[0], counts[1], counts[2], counts[3]),
    )


def _cost(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 10_000:
        return None
    return float(value)
