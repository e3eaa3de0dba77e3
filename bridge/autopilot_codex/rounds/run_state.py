"""A run in the driver's memory (`driver`): its header (with every raise applied), the rounds
counted, the failures in a row, the two spends and the tokens; rebuilt from the rollout on
`--resume`, and read against the run's caps (`caps`) before each round and manager call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .. import meters
from ..store import Store
from . import breaker, caps, rollout
from .custody import Custody
from .decide import Next, Progress, RoundFacts, decide, first
from .markers import Markers
from .walled import RoundWall

# Round endings that are no failure of the round: Ctrl-C, and the budget used up mid-round.
UNCOUNTED = ("interrupted", "budget")


@dataclass
class Run:
    header: rollout.RunHeader
    root: Path
    custody: Custody
    store: Store
    rounds_used: int = 0
    failures: int = 0
    # The rounds' own spend (their processes' reports) and the driver's manager calls'.
    rounds_usd: float = 0.0
    manager_usd: float = 0.0
    tokens: int = 0
    message: str = ""
    # The failure text of the checks after the last verifier's exit, for the next round.
    checks_red: str = ""
    # The boundary every round runs behind (none when the sandbox cannot start here).
    wall: RoundWall | None = None
    fuse: breaker.Breaker = breaker.Breaker()

    @property
    def cost_usd(self) -> float:
        return self.rounds_usd + self.manager_usd

    def reading(self) -> meters.Reading:
        return caps.reading(
            self.header,
            rounds_usd=self.rounds_usd,
            manager_usd=self.manager_usd,
            tokens=self.tokens,
            now=meters.clock(),
        )

    def spent_by(self, round_usd: float) -> bool:
        """Whether a round that has spent `round_usd` so far used up the budget: the same
        reading the caps take after the round, so a round stopped here ends the run there."""
        found = meters.exceeded(
            replace(self.reading(), implementer_usd=self.rounds_usd + round_usd)
        )
        return found is not None and found[0] == "budget"


def capped(run: Run, step: Next) -> Next:
    """The step, unless a cap is reached before the round (or the call) it would start."""
    if not step.runs_a_round:
        return step
    return caps.capped(run.reading()) or step


def resumed(
    log: rollout.RunLog, root: Path, custody: Custody, store: Store, max_retries: int
) -> tuple[Run, Next]:
    run = Run(log.header, root, custody, store, tokens=log.tokens)
    run.rounds_usd, run.manager_usd = log.rounds_usd, log.manager_usd
    for r in log.rounds:
        if r.outcome == "ok":
            run.rounds_used, run.failures = run.rounds_used + 1, 0
        elif r.outcome not in UNCOUNTED:
            run.failures += 1
    if not log.rounds:
        return run, first(log.header.rounds)
    last = log.rounds[-1]
    if last.outcome in UNCOUNTED:
        return run, Next(
            "retry", f"resumed after a round ended by {last.outcome}", last.role, last.wrap_up
        )
    facts = RoundFacts(
        last.role,
        last.wrap_up,
        last.outcome,
        Markers(ready="ready" in last.markers, exit="exit" in last.markers),
        bool(last.files_changed),
        manager_done=last.manager_done,
        checks_passed=last.checks_passed,
    )
    return run, decide(facts, progress(run, max_retries))


def progress(run: Run, max_retries: int) -> Progress:
    return Progress(run.rounds_used, run.header.rounds, run.failures, max_retries)
