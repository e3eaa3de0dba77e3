"""The implementer's spend as Claude Code records it: the session transcript (JSONL, its path
in every hook payload as `transcript_path`), one line per message part, each assistant line
carrying the message's `model` and `usage` (input, output, cache read and cache creation
tokens), and where the host priced the message itself, its `costUSD`: that figure is taken as
it is; only a message without one is priced by the table (`prices`).

Read incrementally (`spendfile`): only the bytes after the offset kept in the loop's state, and
only whole lines, so a hook's cost does not grow with the transcript. Claude Code streams one
message onto several lines (one per content block), the same id on each and the output count
growing (the first line holds a placeholder), so a message is charged at its highest line: a
later line adds only what it holds above what was charged. The last ids seen, and what each
was charged (`SpendRead.totals`), are kept for a message split across two reads. Subagents
and background tasks write records of their own beside the session's (`related`), read the
same way. Standard library only: the hook path imports it.
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

# The line Claude Code writes where it compacted the conversation (its call's usage unwritten).
COMPACTED = b'"compact_boundary"'
# A server-side web search, billed apart from tokens ($10 per 1,000 searches).
WEB_SEARCH_USD = 0.01
# Message ids remembered across reads: a message's lines are written next to each other.
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
        # What each recent message was charged: its four counts and its line's dollars in
        # micro-dollars (5 numbers an id, as `totals` keeps them; none from an older cursor).
        flat = list(last.totals)
        charged = {
            m: (*flat[5 * n : 5 * n + 5], 0, 0, 0, 0, 0)[:5] for n, m in enumerate(last.seen)
        }
        usd, tokens, unknown = 0.0, 0, set[str]()
        latest = last.model  # the model the record last named, for a compaction's price

        def on_line(line: bytes) -> None:
            nonlocal usd, tokens, latest
            summarised = _compaction(line, since)
            if summarised is not None:
                # Its call's usage is written nowhere: charged at its ceiling, the tokens
                # summarised as uncached input, the summary as output.
                price, known = price_of(latest, own)
                if not known:
                    unknown.add(latest or "(no model)")
                tokens += sum(summarised)
                usd += price.usd(summarised[0], summarised[1], 0, 0)
                return
            found = _usage(line, since)
            if found is None:
                return
            message_id, model, counts, cost, (hour_writes, searches) = found
            latest = model or latest
            # The host's own figure where it wrote one; the user's own row still comes first
            # (a plan user's "free"), the table only where neither says.
            mine = any(model.startswith(p) for p in own or {})
            if cost is None or mine:
                price, known = price_of(model, own)
                if not known:
                    unknown.add(model or "(no model)")
                cost = price.usd(*counts)
                if not mine:  # what the four counts leave out, at Anthropic's rates
                    cost += hour_writes * max(0.0, 2 * price.input - price.cache_write) / 1e6
                    cost += searches * WEB_SEARCH_USD
            if message_id:
                now = (*counts, round(cost * 1e6))
                before = charged.pop(message_id, (0,) * 5)
                charged[message_id] = tuple(map(max, now, before))
                while len(charged) > SEEN_KEPT:
                    del charged[next(iter(charged))]
                # Only what this line holds above the message's highest line so far.
                a, b, c, d, micro = (max(0, n - o) for n, o in zip(now, before, strict=True))
                counts, cost = (a, b, c, d), micro / 1e6
            tokens += sum(counts)
            usd += cost

        got = scan(path, last.offset, last.head, on_line, needles=(b'"usage"', COMPACTED))
        if got is None:
            return replace(last, usd=0.0, tokens=0, unknown=(), tampered="")
        return SpendRead(
            got.offset,
            tuple(charged),
            usd,
            tokens,
            tuple(sorted(unknown)),
            head=got.head,
            totals=tuple(n for counted in charged.values() for n in counted),
            model=latest,
            tampered=got.tampered,
        )

    def related(self, path: str, after: float) -> list[str]:
        """Claude Code writes each subagent's messages, foreground or background, to a record
        of its own beside the session's: `<session>/subagents/agent-<id>.jsonl`, and a
        workflow's agents' one folder deeper (`subagents/workflows/<run id>/`): every agent
        record under that folder counts, however deep (links not followed)."""
        if not path.endswith(".jsonl"):
            return []
        found: list[str] = []
        for root, folders, names in os.walk(path[: -len(".jsonl")] + "/subagents"):
            folders.sort()
            found += [
                f"{root}/{name}"
                for name in names
                if name.startswith("agent-") and name.endswith(".jsonl")
            ]
            if len(found) >= SUBAGENTS_KEPT:
                break
        return sorted(found)[:SUBAGENTS_KEPT]


def _compaction(line: bytes, since: str) -> tuple[int, int] | None:
    """(tokens summarised, tokens of the summary) of a compaction's boundary line at or after
    `since` (`compactMetadata.preTokens`, `postTokens`), None for any other line."""
    if COMPACTED not in line:
        return None
    try:
        record = surrogates.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("subtype") != "compact_boundary":
        return None
    stamp, metadata = record.get("timestamp"), record.get("compactMetadata")
    if record.get("type") != "system" or not isinstance(metadata, dict):
        return None
    if since and isinstance(stamp, str) and stamp[:19] < since[:19]:
        return None
    return count(metadata.get("preTokens")), count(metadata.get("postTokens"))


def _usage(
    line: bytes, since: str
) -> tuple[str, str, tuple[int, int, int, int], float | None, tuple[int, int]] | None:
    """(message id, model, (input, output, cache read, cache write), the host's own cost,
    (cache writes at the one-hour rate, web searches)) of an assistant line at or after
    `since`, None for any other line. The cost is the line's `costUSD` where Claude Code wrote
    one, None where it did not."""
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
    if found is None:
        return None
    usage = record["message"]["usage"]
    writes, tools = usage.get("cache_creation"), usage.get("server_tool_use")
    hour = count(writes.get("ephemeral_1h_input_tokens")) if isinstance(writes, dict) else 0
    searches = count(tools.get("web_search_requests")) if isinstance(tools, dict) else 0
    return (*found, _cost(record.get("costUSD")), (min(hour, found[2][3]), searches))


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
