"""`ask`: one question to the manager about the current task, answered mid-turn.

Paid and bounded like every manager call (the budget guard's worst case, reserved under the lock
until the call is settled so parallel questions never spend past the budget together; at most
`max_consultations_per_task`, charged and written to the ledger), but it is not an iteration:
it never touches the no-progress streak, the stall counters or the loop's status. Every refusal
and every failure is one line and a non-zero exit; the loop goes on as it was.

The lock is never held during the manager call; the call is settled only against the same loop.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Config, load_config
from ..contract import PREFIX
from ..errors import BridgeError
from ..manager.select import selected
from ..spend import of_state
from ..spend import usd as money
from ..state import State
from ..store import Store
from ..styles.autopilot.consult import Asked, max_consultations
from ..styles.autopilot.consult import abandon as _abandon
from ..styles.autopilot.consult import prepare as _prepare
from ..styles.autopilot.consult import settle as _settle
from . import worktree_of

if TYPE_CHECKING:
    from ..manager.ask_schema import Consultation
    from ..manager.select import ManagerFactory

DEFAULT_MAX_CONSULTATIONS = Config().max_consultations_per_task
USAGE = 'give a question: autopilot-codex ask "<question>" (or `-` to read it from stdin)'


def ask(
    *, cwd: str | Path, question: str, session_id: str | None, manager: ManagerFactory = selected
) -> str:
    question = question.strip()
    if not question:
        raise BridgeError(USAGE)
    config = load_config()
    store = Store(worktree_of(cwd), lock_timeout=config.lock_timeout_s)
    if manager is selected:
        from ..manager.select import configured_problem

        if problem := configured_problem(config):
            raise BridgeError(f"no answer: {problem}")
    asked = _prepare(store, config, question, session_id)
    from ..manager.ask_schema import Consultation

    try:
        outcome = manager(asked.model, config).ask(
            Consultation, asked.prompt.instructions, asked.prompt.text
        )
    except BaseException:
        # Interrupted or broken mid-call: whether it was billed is unknown, so the worst case
        # is charged, as for a caller that died.
        _abandon(store, asked, session_id)
        raise
    state = _settle(store, asked, outcome, session_id)
    assert outcome.value is not None
    return render(outcome.value, asked, state, outcome.cost_usd, max_consultations(config))


def render(value: Consultation, asked: Asked, state: State, cost: float, limit: int) -> str:
    lines = [f"Manager's answer (confidence {value.confidence}):", value.answer.strip()]
    if value.plan_change and value.plan_change.strip():
        lines += [
            "",
            "Suggested plan change (the manager decides; do not edit the plan): "
            + value.plan_change.strip(),
        ]
    lines += [
        "",
        f"{PREFIX} consultation {asked.number} of {limit} for task {asked.task_id}, "
        f"cost {money(cost)} (spent {of_state(state).total_text()}). This was not an iteration: go on with your turn.",
    ]
    return "\n".join(lines)
