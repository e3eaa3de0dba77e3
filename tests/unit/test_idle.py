"""When a `continue` has nothing left to do (`styles/autopilot/idle`): the rule's edges."""

from __future__ import annotations

from typing import Any

from autopilot_codex.checks.records import CheckResult
from autopilot_codex.guards import Decision, block
from autopilot_codex.manager import Outcome
from autopilot_codex.manager.schemas import Judgement, Review, Verdict
from autopilot_codex.styles.autopilot import idle
from tests.unit.test_reducer import make_state

ALL_DONE: dict[str, Any] = {"completed_tasks": ["T1", "T2"], "current_task": "T3"}


def verdict(done: bool = True, **extra: Any) -> Verdict:
    body: dict[str, Any] = {
        "decision": "continue",
        "reason": "why",
        "current_task_done": done,
        "instructions": "",
        "findings": [],
        **extra,
    }
    return Verdict(**body)


def judgement(review: str) -> Judgement:
    r = Review(decision=review, summary="s", findings=[], revert_files=[])  # type: ignore[arg-type]
    return Judgement(review=r, verdict=verdict())


def check(status: str) -> CheckResult:
    return CheckResult("pytest", 1, status, 0.1, "", 0, "", "", "", "")  # type: ignore[arg-type]


def test_what_counts_as_nothing_left() -> None:
    state = make_state(**ALL_DONE)
    assert idle.nothing_left(state, verdict())
    assert idle.nothing_left(state, judgement("approve"))
    assert not idle.nothing_left(state, judgement("fix"))  # the review's fix is the work
    assert not idle.nothing_left(state, verdict(done=False))  # T3 is left
    assert not idle.nothing_left(state, verdict(instructions="add a changelog"))
    assert not idle.nothing_left(state, verdict(decision="done"))
    assert not idle.nothing_left(state.evolve(last_checks=[check("fail")]), verdict())
    assert idle.nothing_left(state.evolve(last_checks=[check("pass")]), verdict())
    assert not idle.nothing_left(state, None)


def test_the_retry_keeps_the_first_answer_s_acceptance() -> None:
    again = idle._accepting(judgement("approve").model_copy(update={"verdict": verdict(False)}))
    assert again.verdict.current_task_done
    assert idle._accepting(None) is None


def test_only_a_running_continue_is_turned_into_the_pause() -> None:
    state = make_state(**ALL_DONE)
    other = (state, Decision("verdict.no_progress"))
    assert idle.paused(other) is other
    paused, decision = idle.paused((state, block(idle.CONTINUE, "go on")))
    assert (paused.status, decision.event) == ("paused", idle.NOTHING_LEFT)
    assert "all 3 planned tasks accepted" in (paused.stop_reason or "")


class Manager:
    def __init__(self, answer: Verdict) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def ask(self, schema: type[Any], instructions: str, prompt: str) -> Outcome[Any]:
        self.prompts.append(prompt)
        return Outcome(self.answer, cost_usd=0.5)


def test_the_retry_is_charged_and_asked_only_on_a_breach() -> None:
    from autopilot_codex.manager.prompts import Prompt

    state, prompt = make_state(**ALL_DONE), Prompt("i", "p")
    manager = Manager(verdict(decision="done"))
    kept = Outcome[Any](verdict(instructions="go on"), cost_usd=0.25)
    assert idle.ask(manager, Verdict, state, prompt, kept) == (kept, False)
    outcome, breach = idle.ask(manager, Verdict, state, prompt, Outcome(verdict(), cost_usd=0.25))
    assert (breach, outcome.cost_usd, outcome.attempts, outcome.corrections) == (False, 0.75, 2, 1)
    assert manager.prompts == ["p" + idle.NOTE]


def test_the_verdict_rules_say_what_a_continue_past_the_plan_needs() -> None:
    from autopilot_codex.manager.prompts import VERDICT_INSTRUCTIONS

    assert "continue only with the next task in instructions" in VERDICT_INSTRUCTIONS
