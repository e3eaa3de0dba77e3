"""A run's meters and caps (issue 22): the manager's spend and the rounds' own (what each round's
process reports), their total against `--budget`, the rounds' tokens against `--max-tokens`,
the wall time since the run started against `--max-duration`; and `run --resume` raising a cap
(`--rounds` too) so a run that ended at one goes on with the same goal, rounds and ledger.

Checked by the driver before each round starts and before each manager call it makes.
"""

from __future__ import annotations

from .. import meters
from ..errors import BridgeError
from .decide import Next
from .rollout import Raise as Raise
from .rollout import RunHeader, RunLog, RunRaise

# The endings a raise can take back: the flag that raises each, its `Raise` field, its name.
_CAPS = {
    "round_limit": ("--rounds N", "rounds", "round limit"),
    "budget": ("--budget USD", "budget_usd", "budget"),
    "tokens": ("--max-tokens N", "max_tokens", "token limit"),
    "duration": ("--max-duration TIME", "max_seconds", "time limit"),
}
RAISES = {ending: flag for ending, (flag, _, _) in _CAPS.items()}


def reading(
    header: RunHeader, *, rounds_usd: float, manager_usd: float, tokens: int, now: float
) -> meters.Reading:
    return meters.Reading(
        manager_usd=manager_usd,
        implementer_usd=rounds_usd,
        tokens=tokens,
        elapsed_s=max(0.0, now - header.started),
        budget_usd=header.budget_usd,
        max_tokens=header.max_tokens,
        max_seconds=header.max_seconds,
        implementer="rounds",
    )


def of_log(log: RunLog, now: float) -> meters.Reading:
    from dataclasses import replace

    r = reading(
        log.header,
        rounds_usd=log.rounds_usd,
        manager_usd=log.manager_usd,
        tokens=log.tokens,
        now=now,
    )
    return replace(r, estimated=tuple(sorted({x.unpriced for x in log.rounds if x.unpriced})))


def capped(r: meters.Reading) -> Next | None:
    """The ending a reached cap calls for (`budget`, `tokens`, `duration`), or None."""
    found = meters.exceeded(r)
    return None if found is None else Next(found[0], found[1])


def counted(log: RunLog) -> int:
    return sum(1 for r in log.rounds if r.outcome == "ok")


def raise_record(log: RunLog, given: Raise, now: float) -> RunRaise | None:
    """The raise to append before the run goes on (None: nothing given), checked: each value
    must lift its cap above what the run has used, and a run that ended at a cap must be given
    the flag that raises that one."""
    ended = log.end.status if log.end is not None else None
    if ended is not None and ended not in RAISES:
        raise BridgeError(f"nothing to resume: the last run ended ({ended})")
    if ended is not None:
        flag, field, name = _CAPS[ended]
        if getattr(given, field) is None:
            raise BridgeError(
                f"the last run ended at its {name}; raise it to go on: run --resume {flag}"
            )
    if not given.given():
        return None
    r = of_log(log, now)
    used = counted(log)
    if given.rounds is not None and given.rounds <= used:
        raise BridgeError(f"--rounds {given.rounds}: the run has used {used}; give more than that")
    if given.budget_usd is not None and given.budget_usd <= r.total_usd:
        raise BridgeError(
            f"--budget {given.budget_usd:.2f}: the run has spent ${r.total_usd:.2f}; "
            "give more than that"
        )
    if given.max_tokens and given.max_tokens <= r.tokens:
        raise BridgeError(
            f"--max-tokens {given.max_tokens}: the rounds have used {r.tokens}; give more than that"
        )
    elapsed = r.elapsed_s or 0.0
    if given.max_seconds and given.max_seconds <= elapsed:
        raise BridgeError(
            f"--max-duration {meters.duration(given.max_seconds)}: the run started "
            f"{meters.duration(elapsed)} ago; give more than that"
        )
    return RunRaise(kind="raise", run=log.header.run, at=now, **given.given())


def unseen(
    header: RunHeader,
    cost_usd: float | None,
    tokens: int | None,
    *,
    always: bool = False,
    streamed: bool = True,
) -> list[str]:
    """What a round's process did not report and a cap would need (with `always`, whether
    that cap is set or not): said, never taken for nothing spent. `streamed`: the round
    reported its dollars before it ended (the budget could stop it mid-round)."""
    host = header.implementer
    said = []
    if cost_usd is None and (always or header.budget_usd is not None):
        said.append(f"{host} rounds report no dollars: --budget counts the manager's spend only")
    elif not streamed and header.budget_usd is not None:
        said.append(
            f"{host} rounds report their dollars only as they end: a round can pass --budget "
            "by what it costs"
        )
    if tokens is None and (always or header.max_tokens):
        said.append(f"{host} rounds report no tokens: --max-tokens sees none")
    return said


def status_lines(log: RunLog, now: float) -> list[str]:
    """For `status`: rounds used, each meter against its cap, the projected end of a run that
    goes on, and the command that takes an ended one further."""
    r = of_log(log, now if log.end is None else log.end.end)
    used = counted(log)
    lines = [f"Rounds: {used}/{log.header.rounds}", *meters.meter_lines(r)]
    ahead = meters.projection(r, used, "round") if log.end is None else ""
    if ahead:
        lines.append(ahead)
    if log.rounds:
        cost = None if all(x.cost_usd is None for x in log.rounds) else 0.0
        tokens = None if all(x.tokens is None for x in log.rounds) else 0
        lines += [f"The {line}." for line in unseen(log.header, cost, tokens, always=True)]
    unpriced = sorted({r.unpriced for r in log.rounds if r.unpriced})
    if unpriced:
        lines.append("Priced at the dearest row (not in the price table): " + ", ".join(unpriced))
    ended = log.end.status if log.end is not None else ""
    if ended in RAISES:
        lines.append(f"Next: autopilot-codex run --resume {RAISES[ended]} (the same run goes on)")
    return lines
