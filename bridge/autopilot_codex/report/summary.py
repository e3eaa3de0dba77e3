"""The strip on top of the report: what a reader came for, in one line of facts (both meters,
the total of the budget and what is left, tokens, time, iterations and tasks against their caps,
the next command), and a banner when the loop did not end well.

Read from the loop's files as the other views read them (`spend.of_files`), so its figures are
`status`'s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from ..loopfiles import LoopFiles, items, number, strings, text
from ..meters import duration
from ..spend import Spend

# Endings a reader must not miss, and how loudly: "bad" in red, "warn" in amber.
BANNERS = {
    "aborted": ("bad", "The loop was aborted."),
    "stopped_budget": ("bad", "The loop stopped at its budget."),
    "budget": ("bad", "The run stopped at its budget."),
    "stopped_tokens": ("warn", "The loop stopped at its token limit."),
    "stopped_duration": ("warn", "The loop stopped at its time limit."),
    "paused": ("warn", "The loop is paused: it waits for you."),
    "stopped": ("warn", "The loop was stopped before its end."),
}


@dataclass(frozen=True)
class Summary:
    spend: Spend
    tokens: int
    elapsed: str
    iterations: str
    tasks: str
    next_command: str
    banner: tuple[str, str] | None


def build(files: LoopFiles, spend: Spend, now: float | None = None) -> Summary:
    now = time.time() if now is None else now
    state = files.state
    rounds = files.rounds()
    done = strings(state, "completed_tasks")
    planned = items(files.plan, "tasks")
    return Summary(
        spend=spend,
        tokens=int(number(state, "implementer_tokens") + sum(number(r, "tokens") for r in rounds)),
        elapsed=duration(_elapsed(files, now)),
        iterations=_iterations(files),
        tasks=f"{len(done)}/{len(planned)}" if planned else "",
        next_command=_next(files),
        banner=_banner(files.status, len(done), len(planned)),
    )


def _elapsed(files: LoopFiles, now: float) -> float:
    """From the start to the end (the last thing recorded), or to now while it runs."""
    header = files.run_header()
    started = number(files.state, "started_epoch") or number(header, "started")
    if not started:
        return 0.0
    end = now if files.status in ("running", "paused") else _last(files, now)
    return max(0.0, end - started)


def _last(files: LoopFiles, now: float) -> float:
    if ended := number(files.run_end(), "end"):
        return ended
    for event in reversed(files.events):
        stamp = text(event, "ts")
        try:
            return min(now, datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
        except ValueError:
            continue
    return now


def _iterations(files: LoopFiles) -> str:
    if files.held_by_run:
        used = sum(1 for r in files.rounds() if text(r, "outcome") == "ok")
        return f"{used}/{int(number(files.run_header(), 'rounds'))} rounds"
    state = files.state
    cap = int(number(state, "max_iterations"))
    return f"{int(number(state, 'iteration'))}/{cap if cap else '∞'}"


def _next(files: LoopFiles) -> str:
    """The one command that moves the loop on from here."""
    from ..defaults import STYLE
    from ..styles import STYLES

    status = files.status
    if status == "running":
        return "autopilot-codex status"
    style = STYLES.get(files.style if files.style in STYLES else STYLE)
    ended = status in ("done", "aborted")
    return f"autopilot-codex {style.STARTED_BY if ended else style.RESUMED_BY}"


def _banner(status: str, done: int, planned: int) -> tuple[str, str] | None:
    if status == "done" and done < planned:
        return "warn", f"Done with tasks open: {planned - done} of {planned} not done."
    return BANNERS.get(status)
