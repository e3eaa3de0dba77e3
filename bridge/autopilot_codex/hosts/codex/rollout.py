"""The implementer's spend as Codex records it: the session rollout
(`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, its path in every hook payload as
`transcript_path`). Each model response is followed by an `event_msg` line of type
`token_count` whose `info` holds the session's running totals (`total_token_usage`) and the
response's own usage (`last_token_usage`); the model is named once per turn, on a
`turn_context` line.

Totals, not each response, are what is counted: the cursor keeps the totals last seen, and a
look charges only how far they rose. So a line written twice, or a record read again from its
start, never counts twice, and a line edited to show lower totals hides nothing for long: the
next line Codex writes carries its true totals again. Totals that fall without the record being
cut (a session resumed by a process that counts afresh) charge that response's own usage.

Read incrementally (`spendfile`), so a hook's cost does not grow with the rollout. Standard
library only but for the price table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ... import surrogates
from ...host import SpendRead
from ...prices import Price, count
from ..spendfile import scan
from . import prices as table

# (input, cached input, cache-write input, output): input counts the cached kinds too.
Totals = tuple[int, int, int, int]
NONE: Totals = (0, 0, 0, 0)
# The only lines read: the rest of a rollout (messages, tool calls and their output) is skipped.
NEEDLES = (b'"session_meta"', b'"turn_context"', b'"token_count"')


class RolloutReader:
    def read(
        self, path: str, last: SpendRead, since: str, prices: Any = None, model: str = ""
    ) -> SpendRead:
        own: Mapping[str, Price] | None = prices if isinstance(prices, Mapping) else None
        tally = _Tally(last, since, own, model)
        got = scan(path, last.offset, last.head, tally.line, tally.again, NEEDLES)
        if got is None:
            return replace(last, usd=0.0, tokens=0, unknown=(), tampered="")
        return SpendRead(
            got.offset,
            (),
            tally.usd,
            tally.tokens,
            tuple(sorted(tally.unknown)),
            head=got.head,
            totals=tally.marks if tally.marks is not None else (),
            model=tally.model,
            tampered=got.tampered,
            plan=tally.plan,
        )

    def related(self, path: str, after: float) -> list[str]:
        from .subagents import children

        return children(path, after)


class _Tally:
    """One look's count: the marks (totals last seen) and the model in force as it goes."""

    def __init__(
        self, last: SpendRead, since: str, own: Mapping[str, Price] | None, floor: str
    ) -> None:
        self.marks: Totals | None = _totals(list(last.totals)) if last.totals else None
        self.model = last.model
        self.plan = last.plan
        self.since = since
        self.own = own
        # The model the hook payload names: a `turn_context` the implementer appends could
        # name a cheaper one, so the dearer of the two prices the spend.
        self.floor = floor
        self.usd, self.tokens, self.unknown = 0.0, 0, set[str]()
        self.reread = False
        # A subagent's rollout first copies its parent's history, up to this ordinal: the
        # totals there are the parent's, counted in the parent's rollout.
        self.inherited = 0

    def again(self) -> None:
        # A record cut short is read again from its start: the marks then only ever rise, so
        # what was counted is not counted again.
        self.reread = True

    def line(self, line: bytes) -> None:
        if b'"session_meta"' in line:
            found = _record(line, "session_meta")
            start = found[1].get("subagent_history_start_ordinal") if found else None
            if isinstance(start, int) and not isinstance(start, bool) and not self.inherited:
                self.inherited = start
        elif b'"turn_context"' in line:
            found = _record(line, "turn_context")
            named = found[1].get("model") if found else None
            if isinstance(named, str) and named:
                self.model = named
        elif b'"token_count"' in line:
            found = _record(line, "event_msg")
            if (
                found is not None
                and found[1].get("type") == "token_count"
                and not self.copied(line)
            ):
                limits = found[1].get("rate_limits")
                plan = limits.get("plan_type") if isinstance(limits, dict) else None
                if isinstance(plan, str):
                    self.plan = plan[:40]
                self.usage(found[0], found[1].get("info"))

    def copied(self, line: bytes) -> bool:
        """Is this line of the parent's history a subagent's rollout starts with?"""
        if not self.inherited:
            return False
        try:
            ordinal = surrogates.loads(line).get("ordinal")
        except (ValueError, AttributeError):
            return False
        return isinstance(ordinal, int) and ordinal < self.inherited

    def usage(self, stamp: str, info: object) -> None:
        if not isinstance(info, dict):
            return  # a heartbeat without usage
        total = _totals(info.get("total_token_usage"))
        own_use = _totals(info.get("last_token_usage"))
        before = self.marks
        self.marks = _max(before, total) if self.reread and before is not None else total
        if self.since and stamp[:19] < self.since[:19]:
            return  # before the loop started: only where its totals stood
        if before is None:
            delta = total
        elif all(t >= b for t, b in zip(total, before, strict=True)):
            delta = _minus(total, before)
        elif self.reread:
            delta = _minus(self.marks, before)
        else:
            delta = own_use  # counted afresh by the host: this response's own usage
        if delta == NONE:
            return
        price, known = table.price_of(self.model, self.own)
        if not known:
            self.unknown.add(self.model or "(no model)")
        if self.floor and self.floor != self.model:
            floor, floor_known = table.price_of(self.floor, self.own)
            if floor_known and (floor.output, floor.input) > (price.output, price.input):
                price = floor
        self.usd += table.usd(price, *delta, long=own_use[0] > table.LONG_CONTEXT_TOKENS)
        self.tokens += delta[0] + delta[3]


def _record(line: bytes, kind: str) -> tuple[str, dict[str, Any]] | None:
    """(timestamp, payload) of a line of this type."""
    try:
        record = surrogates.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("type") != kind:
        return None
    payload = record.get("payload")
    stamp = record.get("timestamp")
    if not isinstance(payload, dict):
        return None
    return (stamp if isinstance(stamp, str) else ""), payload


def _totals(usage: object) -> Totals:
    """(input, cached, cache write, output) of a usage object or a kept list; output counts the
    reasoning tokens once, whether or not the host folded them in."""
    if isinstance(usage, list):
        numbers = [count(v) for v in usage[:4]] + [0] * (4 - len(usage[:4]))
        return numbers[0], numbers[1], numbers[2], numbers[3]
    if not isinstance(usage, dict):
        return NONE
    input_, output = count(usage.get("input_tokens")), count(usage.get("output_tokens"))
    reasoning = count(usage.get("reasoning_output_tokens"))
    total = count(usage.get("total_tokens"))
    if reasoning and total >= input_ + output + reasoning:
        output += reasoning  # the total says reasoning was not in the output count
    return (
        input_,
        count(usage.get("cached_input_tokens")),
        count(usage.get("cache_write_input_tokens")),
        output,
    )


def _max(a: Totals, b: Totals) -> Totals:
    return max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def _minus(a: Totals, b: Totals) -> Totals:
    return a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]
