"""The loop's meters and their caps: the manager's spend, the implementer's spend (read from
the host), their total against `--budget`, tokens against `--max-tokens`, wall time against
`--max-duration`. Pure but for `clock`: the checks take the time as `now`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .spend import Spend, usd
from .state import State, Status

if TYPE_CHECKING:
    from .host import Host


def clock() -> float:
    """The wall clock the ralph Stop reads; a test replaces it."""
    return time.time()


def total_usd(state: State) -> float:
    return state.budget_used_usd + state.implementer_used_usd


def elapsed(state: State, now: float) -> float:
    return max(0.0, now - state.started_epoch)


# What ends a loop, by meter, and the typed status each ends it with.
Cap = Literal["budget", "tokens", "duration"]
STATUS: dict[Cap, Status] = {
    "budget": "stopped_budget",
    "tokens": "stopped_tokens",
    "duration": "stopped_duration",
}


@dataclass(frozen=True)
class Reading:
    """A loop's meters and their caps at one moment, whatever the style keeps them in.

    `elapsed_s` None: time is not checked. `budget_usd` None: no dollar cap; `max_tokens`,
    `max_seconds` 0: no cap. `implementer` names the implementer's meter in messages (the
    rounds' host processes are "rounds")."""

    manager_usd: float
    implementer_usd: float
    tokens: int
    elapsed_s: float | None
    budget_usd: float | None
    max_tokens: int = 0
    max_seconds: float = 0.0
    implementer: str = "implementer"
    # The models whose tokens were priced by rule (`spend.Spend.estimated`).
    estimated: tuple[str, ...] = ()

    @property
    def total_usd(self) -> float:
        return self.manager_usd + self.implementer_usd


def reading(state: State, now: float | None, budget_usd: float | None) -> Reading:
    return Reading(
        manager_usd=state.budget_used_usd,
        implementer_usd=state.implementer_used_usd,
        tokens=state.implementer_tokens,
        elapsed_s=None if now is None else elapsed(state, now),
        budget_usd=budget_usd,
        max_tokens=state.max_tokens,
        max_seconds=state.max_seconds,
        estimated=tuple(state.implementer_unpriced),
    )


def exceeded(r: Reading) -> tuple[Cap, str] | None:
    """The cap this reading has reached, with a reason naming the meter and by how much."""
    if r.budget_usd is not None and r.total_usd >= r.budget_usd:
        if r.implementer_usd >= r.budget_usd:
            meter = f"{r.implementer} spend"
        elif r.manager_usd >= r.budget_usd:
            meter = "manager spend"
        else:
            meter = "total"
        return "budget", (
            f"budget used up by {meter}: {usd(r.total_usd)} of {usd(r.budget_usd)} "
            f"(manager {usd(r.manager_usd)}, {r.implementer} {usd(r.implementer_usd)}; "
            f"{usd(r.total_usd - r.budget_usd)} over)"
        )
    if r.max_tokens and r.tokens >= r.max_tokens:
        return "tokens", (
            f"token limit reached: {r.tokens} of {r.max_tokens} tokens "
            f"({r.tokens - r.max_tokens} over)"
        )
    if r.elapsed_s is not None and r.max_seconds and r.elapsed_s >= r.max_seconds:
        return "duration", (
            f"time limit reached: {duration(r.elapsed_s)} of {duration(r.max_seconds)} "
            f"({duration(r.elapsed_s - r.max_seconds)} over)"
        )
    return None


def over(state: State, now: float | None, budget_usd: float | None) -> tuple[Status, str] | None:
    """The cap the loop has reached, as (its typed status, a reason naming the meter and by how
    much), or None. `budget_usd` None: no dollar cap (a ralph loop without `--budget`);
    `now` None: time is not checked."""
    found = exceeded(reading(state, now, budget_usd))
    return None if found is None else (STATUS[found[0]], found[1])


def spent(state: State, now: float | None) -> tuple[tuple[Status, str] | None, float]:
    """The cap reached (`over`, the dollar cap left to the caller) and the dollars spent
    (`total_usd`), in one call for a guard that weighs a call's price against both."""
    return over(state, now, None), total_usd(state)


def clocked(state: State, budget_usd: float | None) -> tuple[float, tuple[Status, str] | None]:
    """The clock, read once (`clock`), and the cap the loop has reached by then (`over`): one
    call for a Stop that needs both."""
    now = clock()
    return now, over(state, now, budget_usd)


def projection(r: Reading, done: int, unit: str = "iteration") -> str:
    """How many more iterations (rounds) each capped meter lasts at the rate spent so far
    per `done` iteration: "At this rate the budget lasts about 6 more iterations; the time
    cap about 9 more." "" when nothing is capped or nothing can be said yet."""
    if done <= 0:
        return ""
    meters: list[tuple[str, float, float]] = []  # (name, used, cap)
    if r.budget_usd is not None:
        meters.append(("budget", r.total_usd, r.budget_usd))
    if r.max_tokens:
        meters.append(("token cap", float(r.tokens), float(r.max_tokens)))
    if r.max_seconds and r.elapsed_s is not None:
        meters.append(("time cap", r.elapsed_s, r.max_seconds))
    parts = []
    for name, used, cap in meters:
        if used <= 0:
            continue  # no rate yet: nothing spent on this meter
        # A hair over, so float noise (0.15 / 0.05 = 2.999...) does not cost a whole iteration.
        more = max(0, int((cap - used) / (used / done) + 1e-9))
        parts.append((name, more))
    if not parts:
        return ""
    (first, n), rest = parts[0], parts[1:]
    text = f"At this rate the {first} lasts about {n} more {unit}{'' if n == 1 else 's'}"
    text += "".join(f"; the {name} about {more} more" for name, more in rest)
    return text + "."


def duration(seconds: float) -> str:
    """2h5m, 3m20s, 45s."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m{secs}s" if secs else f"{minutes}m"
    return f"{secs}s"


def parse_duration(raw: str) -> float:
    """`2h`, `90m`, `45s`, `1h30m` or a number of seconds, as seconds; ValueError otherwise."""
    import re

    text = raw.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        value = float(text)
    else:
        parts = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
        if not text or parts is None:
            raise ValueError(f"not a duration: {raw!r} (use 2h, 90m, 1h30m or seconds)")
        hours, minutes, secs = (int(g) if g else 0 for g in parts.groups())
        value = float(hours * 3600 + minutes * 60 + secs)
    if not 0 < value <= 30 * 24 * 3600:
        raise ValueError(f"not a duration: {raw!r} (more than 0, at most 30 days)")
    return value


def meter_lines(r: Reading) -> list[str]:
    """Each meter against its cap: the spends and their total, tokens, time."""
    cap = r.budget_usd if r.budget_usd else None  # a cap of 0 is none: never "of $0.00"
    spend = Spend(r.manager_usd, r.implementer_usd, cap, r.estimated, r.implementer)
    spent = r.elapsed_s or 0.0
    return [
        f"Spend: {spend.text()}" + (" (no budget)" if cap is None else ""),
        f"Tokens: {r.tokens}"
        + (f" / {r.max_tokens}" if r.max_tokens else "")
        + f" · time {duration(spent)}"
        + (f" / {duration(r.max_seconds)}" if r.max_seconds else ""),
    ]


def status_lines(
    state: State, now: float, *, budget_usd: float | None, reads_spend: bool
) -> list[str]:
    """Each meter against its cap, for `status`; the projected end; what cannot be seen, said."""
    r = reading(state, now, budget_usd)
    lines = meter_lines(r)
    done = state.iteration if state.own is None else state.own.ended(state.iteration)
    ahead = projection(r, done) if state.status == "running" else ""
    if ahead:
        lines.append(ahead)
    if not reads_spend:
        lines.append(
            "The implementer's spend is not seen on this host: the budget counts the manager only."
        )
    if reads_spend and state.tool_events and not state.implementer_tokens:
        lines.append(
            "No usage seen in the host's records yet: a host version whose records hold none, "
            "or a session without a record (codex exec --ephemeral), leaves the budget to the "
            "manager's spend alone."
        )
    for cursor in state.spend_cursors:
        if cursor.tampered:
            lines.append(
                f"The host's record {cursor.path} was found tampered with ({cursor.tampered}): "
                "the spend already counted is kept (the ledger's spend.tampered)."
            )
    plans = sorted({c.plan for c in state.spend_cursors if c.plan})
    if plans:
        lines.append(
            f"The host reports a {', '.join(plans)} plan: the implementer's dollars are list "
            "prices of its tokens, notional against the plan; --max-tokens caps what it counts."
        )
    if state.implementer_unpriced:
        lines.append(
            "Priced at the dearest row (not in the price table): "
            + ", ".join(state.implementer_unpriced)
        )
    return lines


def until(state: State, events: list[dict[str, object]]) -> float:
    """The moment a loop's clock reads: now while it runs or waits (paused); once it has ended,
    the time of its last ledger event (the ending), so an ended loop's time stops there."""
    from datetime import datetime

    now = clock()
    if state.status in ("running", "paused"):
        return now
    for event in reversed(events):
        stamp = event.get("ts")
        if isinstance(stamp, str):
            try:
                return min(now, datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
            except ValueError:
                continue
    return now


def spend_lines(
    state: State, budget_usd: float | None, events: list[dict[str, object]], host: Host
) -> list[str]:
    """`status_lines` at the loop's moment (`until`: now, or its end), for the loop's host."""
    reads = host.spend_reader() is not None
    return status_lines(state, until(state, events or []), budget_usd=budget_usd, reads_spend=reads)
