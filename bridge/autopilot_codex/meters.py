"""The loop's meters and their caps: the manager's spend, the implementer's spend (read from
the host), their total against `--budget`, tokens against `--max-tokens`, wall time against
`--max-duration`. Pure but for `clock`: the checks take the time as `now`.
"""

from __future__ import annotations

import time

from .state import State, Status


def clock() -> float:
    """The wall clock the ralph Stop reads; a test replaces it."""
    return time.time()


def total_usd(state: State) -> float:
    return state.budget_used_usd + state.implementer_used_usd


def elapsed(state: State, now: float) -> float:
    return max(0.0, now - state.started_epoch)


def over(state: State, now: float | None, budget_usd: float | None) -> tuple[Status, str] | None:
    """The cap the loop has reached, as (its typed status, a reason naming the meter and by how
    much), or None. `budget_usd` None: no dollar cap (a ralph loop without `--budget`);
    `now` None: time is not checked."""
    if budget_usd is not None:
        total = total_usd(state)
        if total >= budget_usd:
            if state.implementer_used_usd >= budget_usd:
                meter = "implementer spend"
            elif state.budget_used_usd >= budget_usd:
                meter = "manager spend"
            else:
                meter = "total"
            reason = (
                f"budget used up by {meter}: ${total:.2f} of ${budget_usd:.2f} "
                f"(manager ${state.budget_used_usd:.2f}, implementer "
                f"${state.implementer_used_usd:.2f}; ${total - budget_usd:.2f} over)"
            )
            return "stopped_budget", reason
    if state.max_tokens and state.implementer_tokens >= state.max_tokens:
        reason = (
            f"token limit reached: {state.implementer_tokens} of {state.max_tokens} tokens "
            f"({state.implementer_tokens - state.max_tokens} over)"
        )
        return "stopped_tokens", reason
    if now is not None and state.max_seconds and elapsed(state, now) >= state.max_seconds:
        reason = (
            f"time limit reached: {duration(elapsed(state, now))} of "
            f"{duration(state.max_seconds)}"
        )
        return "stopped_duration", reason
    return None


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


def status_lines(state: State, now: float, *, budget_usd: float | None, reads_spend: bool) -> list[str]:
    """Each meter against its cap, for `status`; and what cannot be seen, said."""

    def money(usd: float) -> str:
        return "<$0.01" if 0 < usd < 0.01 else f"${usd:.2f}"

    cap = f" / {money(budget_usd)}" if budget_usd is not None else " (no budget)"
    seconds = state.max_seconds or (state.ralph.max_seconds if state.ralph else 0.0)
    started = state.ralph.started_at if state.ralph else state.started_epoch
    spent = max(0.0, now - started)
    lines = [
        f"Spend: manager {money(state.budget_used_usd)} · implementer "
        f"{money(state.implementer_used_usd)} · total {money(total_usd(state))}{cap}",
        f"Tokens: {state.implementer_tokens}"
        + (f" / {state.max_tokens}" if state.max_tokens else "")
        + f" · time {duration(spent)}"
        + (f" / {duration(seconds)}" if seconds else ""),
    ]
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


def spend_lines(state: State, budget_usd: float | None) -> list[str]:
    """`status_lines` now, for the loop's host."""
    from .hosts import get

    reads = get(state.host).spend_reader() is not None
    return status_lines(state, clock(), budget_usd=budget_usd, reads_spend=reads)
