"""A loop's spend, computed once and written one way: the manager's, the implementer's, their
total against the budget. Every view (status, loops, watch, report, logs, the hooks' messages,
the closing line, `--json`) takes its figure from here, so no two views can disagree.

Two sources, one shape: the engine's `State` (the hooks, `status`) and the tolerant readers'
`LoopFiles` (the views that only look). A rounds run keeps its spend in its rollout (each
round's host cost and the driver's manager calls), the other styles in state.json; both are
summed the same way. Standard library only: the hook path imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loopfiles import LoopFiles
    from .state import State

# What marks a figure that holds tokens priced by rule rather than by the host or the table.
ESTIMATED = "~"


def usd(value: float, *, estimated: bool = False) -> str:
    """Dollars to the cent; a cost below a cent is "<$0.01", never nothing; "~" before an
    estimate."""
    mark = ESTIMATED if estimated else ""
    if value <= 0:
        return f"{mark}$0.00"
    if value < 0.01:
        return f"{mark}<$0.01"
    return f"{mark}${value:.2f}"


@dataclass(frozen=True)
class Spend:
    """The two meters and their cap. `budget` None: no dollar cap. `estimated`: the models
    whose tokens were priced by rule (not the host's own figure, not in the price table)."""

    manager: float
    implementer: float
    budget: float | None = None
    estimated: tuple[str, ...] = ()
    # What the implementer's meter is called in words ("rounds" for a rounds run's hosts).
    implementer_name: str = "implementer"

    @property
    def total(self) -> float:
        return self.manager + self.implementer

    @property
    def left(self) -> float | None:
        return None if self.budget is None else max(0.0, self.budget - self.total)

    def total_text(self) -> str:
        """The total alone, "of" the budget when there is one: "$1.60 of $2.00"."""
        cap = "" if self.budget is None else f" of {usd(self.budget)}"
        return usd(self.total, estimated=bool(self.estimated)) + cap

    def short(self) -> str:
        """Both meters and their total in a table's cell: "<$0.01 + $1.59 = $1.60 of $2.00"."""
        implementer = usd(self.implementer, estimated=bool(self.estimated))
        return f"{usd(self.manager)} + {implementer} = {self.total_text()}"

    def text(self) -> str:
        """Both meters and their total: "manager $0.01 · implementer $1.59 · total $1.60 of
        $2.00"; an estimate says which models it priced by rule."""
        shown = (
            f"manager {usd(self.manager)} · {self.implementer_name} "
            f"{usd(self.implementer, estimated=bool(self.estimated))} · total {self.total_text()}"
        )
        if self.estimated:
            shown += f" ({ESTIMATED} estimated: {', '.join(self.estimated)} priced by rule)"
        return shown

    def as_json(self) -> dict[str, Any]:
        return {
            "manager_usd": round(self.manager, 6),
            "implementer_usd": round(self.implementer, 6),
            "total_usd": round(self.total, 6),
            "budget_usd": self.budget,
            "estimated": list(self.estimated),
            "total": self.total_text(),
            "short": self.short(),
            "text": self.text(),
        }


# Ledger events that restate a charge another event made (a question's answer is the `ask`
# event's manager call): shown, never summed again.
RESTATED = ("question.answered", "question.to_user")


def charged(record: dict[str, Any]) -> float:
    """What one ledger record charged: its call's cost and any reservation it settled."""
    if record.get("event") in RESTATED:
        return 0.0
    total = 0.0
    for key in ("cost_usd", "charged_usd"):
        value = record.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            total += float(value)
    return total


def of_state(state: State) -> Spend:
    """The engine's state's spend: the hooks' messages and `status`."""
    # A style whose record keeps its cap elsewhere (a run's, in its rollout) shows none here.
    mine = state.own is None or state.own.envelope_budget
    return Spend(
        state.budget_used_usd,
        state.implementer_used_usd,
        _cap(state.budget_usd) if mine else None,
        tuple(state.implementer_unpriced),
    )


def of_files(files: LoopFiles) -> Spend:
    """The spend as the loop's files hold it, read tolerantly: the views that only look."""
    from .loopfiles import number, strings, text

    state = files.state
    manager = number(state, "budget_used_usd")
    implementer = number(state, "implementer_used_usd")
    estimated = set(strings(state, "implementer_unpriced"))
    rounds = files.rounds()
    manager += sum(number(r, "manager_usd") for r in rounds)
    implementer += sum(number(r, "cost_usd") for r in rounds)
    estimated |= {text(r, "unpriced") for r in rounds if text(r, "unpriced")}
    run = files.held_by_run
    budget = _cap(files.run_budget() if run else state.get("budget_usd"))
    name = "rounds" if run else "implementer"
    return Spend(manager, implementer, budget, tuple(sorted(estimated)), name)


def _cap(value: object) -> float | None:
    """A dollar cap; None for none, and for 0, which a loop without a budget stores (never
    "$0.00 of $0.00")."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return float(value)
