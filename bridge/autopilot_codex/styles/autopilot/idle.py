"""A `continue` with nothing left to do: every planned task accepted, and the verdict names no
new work (no instructions, no findings) while the checks are green. Each such continue buys
an implementer turn that has nothing to do, so it is a breach of the verdict's contract: the
manager is asked once more, in the same Stop, for the next task or `done` (a corrective
retry); a second such answer pauses the loop (`NOTHING_LEFT`), which the user can resume.

Pure, except `ask`, which makes the retry through the manager it is given.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ...guards import Step
from .caps import end
from .record import of

if TYPE_CHECKING:
    from ...manager import Manager, Outcome
    from ...manager.prompts import Prompt
    from ...manager.schemas import Verdict
    from ...state import State

NOTHING_LEFT = "verdict.nothing_left"
CONTINUE = "verdict.continue"

NOTE = (
    "\n\nYour previous answer was `continue` with no instructions and no findings, but every "
    "planned task has been accepted: the implementer would get a turn with nothing to do. "
    "Answer `done` if the goal is met; otherwise `continue` with the next task, concrete, in "
    "`instructions`."
)


def verdict_of(value: Any) -> Verdict | None:
    """The verdict of an answer: a Verdict, or a Judgement whose review lets the turn end."""
    from ...manager.schemas import Judgement, Verdict

    if isinstance(value, Verdict):
        return value
    if isinstance(value, Judgement) and value.review.decision == "approve":
        return value.verdict
    return None


def nothing_left(state: State, value: Any) -> bool:
    """Whether the answer is a `continue` with nothing left to do (see the module's doc)."""
    verdict = verdict_of(value)
    if verdict is None or verdict.decision != "continue":
        return False
    if verdict.instructions.strip() or verdict.findings:
        return False
    if any(r.status != "pass" for r in state.last_checks or ()):
        return False  # the red checks are the work
    tasks = [t.id for t in state.plan.tasks]
    own = of(state)
    done = set(own.completed_tasks)
    if verdict.current_task_done and own.current_task is not None:
        done.add(own.current_task)
    return bool(tasks) and all(t in done for t in tasks)


def ask(
    manager: Manager, schema: type[Any], state: State, prompt: Prompt, outcome: Outcome[Any]
) -> tuple[Outcome[Any], bool]:
    """The answer to use and whether it still breaches the contract: a breach is asked once
    more, with a note saying why; both calls are charged."""
    if not nothing_left(state, outcome.value):
        return outcome, False
    again: Outcome[Any] = manager.ask(schema, prompt.instructions, prompt.text + NOTE)
    joined = dataclasses.replace(
        again,
        value=_accepting(again.value),
        cost_usd=outcome.cost_usd + again.cost_usd,
        usage=outcome.usage + again.usage,
        attempts=outcome.attempts + again.attempts,
        corrections=outcome.corrections + again.corrections + 1,
    )
    return joined, nothing_left(state, joined.value)


def _accepting(value: Any) -> Any:
    """The retry's answer, keeping the first answer's acceptance of the current task: the first
    was a breach only if it accepted every task that was left."""
    from ...manager.schemas import Judgement, Verdict

    if isinstance(value, Verdict):
        return value.model_copy(update={"current_task_done": True})
    if isinstance(value, Judgement):
        return value.model_copy(update={"verdict": _accepting(value.verdict)})
    return value


def paused(step: Step) -> Step:
    """The reducer's continue, turned into a pause with a typed reason."""
    state, decision = step
    if decision.event != CONTINUE or state.status != "running":
        return step
    tasks = len(state.plan.tasks)
    reason = (
        f"nothing left to do: all {tasks} planned task{'s' if tasks != 1 else ''} accepted, and "
        "the manager said continue twice with no new task"
    )
    return end(state, "paused", reason, NOTHING_LEFT)
