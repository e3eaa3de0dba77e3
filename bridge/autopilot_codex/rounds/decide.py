"""After a round: what next. Pure, so the whole protocol is one table test.

- a failed round (crash, non-zero exit, stream error, timeout) is retried, up to
  `max_retries` times in a row, without using up a round;
- no marker: the next round continues the work;
- `::potter(ready)`: the next round is a fresh verifier;
- `::potter(exit)` from a verifier that changed no project files (git says so, not the
  worker) is completion, if the manager (when there is one) also says done;
  `exit` from anyone else is only a candidate, like `ready`; with checks, only when the
  user's checks also pass in that verifier round;
- the last round carries the wrap-up prompt; after it the run ends at the round limit.

The caps (budget, tokens, time) are the driver's, checked before each round (`caps`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .markers import Markers
from .rollout import Outcome, Role

Action = Literal[
    "continue",
    "verify",
    "retry",
    "complete",
    "round_limit",
    "budget",
    "tokens",
    "duration",
    "error",
    "interrupted",
    "no_progress",
    # A file a host or git runs programs from changed between rounds (`hostfiles`).
    "tampered",
]
MAX_RETRIES = 5


@dataclass(frozen=True)
class RoundFacts:
    role: Role
    wrap_up: bool
    outcome: Outcome
    markers: Markers
    project_files_changed: bool
    # The manager's verdict on the whole diff since the start; None when there is no manager.
    manager_done: bool | None = None
    # Whether the user's checks passed after a verifier's exit; None when none ran.
    checks_passed: bool | None = None


@dataclass(frozen=True)
class Progress:
    rounds_used: int  # counted (successful) rounds, this one included
    rounds: int
    failures: int  # failed attempts in a row, this one included
    max_retries: int = MAX_RETRIES


@dataclass(frozen=True)
class Next:
    action: Action
    why: str
    role: Role = "implement"
    wrap_up: bool = False

    @property
    def runs_a_round(self) -> bool:
        return self.action in ("continue", "verify", "retry")


def first(rounds: int) -> Next:
    return Next("continue", "first round", "implement", wrap_up=rounds <= 1)


def decide(facts: RoundFacts, progress: Progress) -> Next:
    if facts.outcome == "interrupted":
        return Next("interrupted", "interrupted", facts.role, facts.wrap_up)
    if facts.outcome == "budget":
        # Stopped as its spend reached the budget: the caps end the run before the retry.
        return Next("retry", "round stopped at the budget", facts.role, facts.wrap_up)
    if facts.outcome != "ok":
        if progress.failures > progress.max_retries:
            return Next("error", f"{progress.failures} failed attempts in a row")
        # Not counted: a retry uses up no round, so it meets no round limit.
        return Next("retry", f"round failed ({facts.outcome})", facts.role, facts.wrap_up)
    if facts.markers.exit and facts.role == "verify" and not facts.project_files_changed:
        if facts.checks_passed is False:
            return _gate(Next("continue", "verified, but the checks did not pass"), progress)
        if facts.manager_done is False:
            return _gate(Next("continue", "verified, but the manager says not done"), progress)
        return Next("complete", "a fresh verifier changed nothing and confirmed the objective")
    if facts.markers.exit or facts.markers.ready:
        why = "candidate completion" if facts.role == "implement" else "the verifier made changes"
        if facts.markers.exit and facts.role == "implement":
            why = "exit from a round that was not a verifier: verify first"
        return _gate(Next("verify", why, "verify"), progress)
    return _gate(Next("continue", "work remains"), progress)


def _gate(step: Next, progress: Progress) -> Next:
    """Stop at the round limit; mark the last round for the wrap-up prompt."""
    if progress.rounds_used >= progress.rounds:
        return Next("round_limit", f"round limit {progress.rounds} reached")
    wrap_up = progress.rounds_used + 1 >= progress.rounds
    return Next(step.action, step.why, step.role, wrap_up)
