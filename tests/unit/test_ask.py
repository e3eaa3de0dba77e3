"""The consultation's pure parts: who may ask and when, the prompt's bounds, old state files."""

from __future__ import annotations

from typing import Any

import pytest

from autopilot_codex.manager.ask_prompt import ask_prompt
from autopilot_codex.state import Plan, State, Task, migrate
from autopilot_codex.state_ranges import parse_state
from autopilot_codex.styles.autopilot.consult import refusal
from autopilot_codex.styles.autopilot.record import AutopilotRecord, evolve, of, task_of


def make_state(**update: Any) -> State:
    tasks = [
        Task(id=f"T{n}", title=f"task {n}", files=[], steps=["s"], acceptance=["a"], tests=[])
        for n in (1, 2)
    ]
    base: dict[str, Any] = {
        "goal": "g",
        "plan": Plan(summary="p", tasks=tasks),
        "base_sha": "base",
        "worktree": "/w",
        "session_id": "s1",
        "own": AutopilotRecord(model="gpt-6.2-sol", current_task="T1", task_base_sha="base"),
    }
    return evolve(State(**base), **update)


@pytest.mark.parametrize(
    ("update", "session", "why"),
    [
        ({}, "s1", None),
        # The shell cannot always name its session: taken for the implementer.
        ({}, None, None),
        ({"session_id": None}, "s2", None),
        ({"owner": "driver"}, "s2", None),
        ({}, "s2", "belongs to another session"),
        ({"status": "paused"}, "s1", "the loop is paused, not running"),
        ({"consultations": 3, "consultations_task": "T1"}, "s1", "3 of 3 consultations"),
        # The count belongs to the task it was made for; the next task starts from zero.
        ({"consultations": 3, "consultations_task": "T1", "current_task": "T2"}, "s1", None),
        ({"consultations": 2, "consultations_task": "T1"}, "s1", None),
    ],
)
def test_who_may_ask_and_when(update: dict[str, Any], session: str | None, why: str | None) -> None:
    got = refusal(make_state(**update), session, 3)
    assert (got is None) if why is None else (got is not None and why in got)


def test_no_loop_is_refused() -> None:
    assert refusal(None, "s1", 3) == "no loop in this worktree; ask works only while a loop runs"


def test_the_prompt_is_bounded_and_keeps_the_question() -> None:
    state = make_state()
    diff = "diff --git a/x b/x\n" + "+line\n" * 50_000
    prompt = ask_prompt(
        goal="g",
        plan=state.plan,
        task=task_of(state),
        position=(1, 2),
        completed=[],
        question="Key sk-abcdefghijklmnopqrstuvwx leaked? Which file?",
        diff=diff,
        cap=10_000,
    )
    assert len(prompt) <= 10_000
    assert prompt.text.rstrip().endswith("[REDACTED] leaked? Which file?")
    assert "sk-abcdefghijklmnopqrstuvwx" not in prompt.text
    assert "Diff too large to send whole" in prompt.text and "<<<DATA DIFF" in prompt.text


def test_a_state_file_from_before_consultations_loads() -> None:
    data = {
        "goal": "g",
        "current_task": "T1",
        "base_sha": "b",
        "task_base_sha": "b",
        "worktree": "/w",
        "model": "m",
        "schema_version": 2,
    }
    state = parse_state(migrate(data))
    assert (
        of(state).consultations,
        of(state).consultations_task,
        of(state).consultations_total,
    ) == (
        0,
        None,
        0,
    )


def test_a_negative_consultation_count_is_refused() -> None:
    from autopilot_codex import typedjson

    data = {
        "goal": "g",
        "current_task": "T1",
        "base_sha": "b",
        "task_base_sha": "b",
        "worktree": "/w",
        "model": "m",
        "consultations": -5,
        "schema_version": 2,
    }
    with pytest.raises(typedjson.Invalid, match="consultations"):
        parse_state(migrate(data))


def test_the_skill_quotes_the_default_settings_truly() -> None:
    from pathlib import Path

    from autopilot_codex.commands.ask import DEFAULT_MAX_CONSULTATIONS
    from autopilot_codex.config import Config
    from autopilot_codex.manager.pricing import ceiling_usd, price_for

    config = Config()
    skill = Path(__file__).parents[2] / "skills" / "consultation" / "SKILL.md"
    text = skill.read_text(encoding="utf-8")
    call = ceiling_usd("x" * config.prompt_chars, config.max_output_tokens, price_for(config.model))
    assert f"up to ${call:.2f} a question" in text and f"up to ${call:.2f} (the verdict)" in text
    assert f"manager `{config.model}`" in text and f"{config.prompt_chars:,} characters" in text
    assert f"at most {DEFAULT_MAX_CONSULTATIONS} per task" in text
    assert f"one iteration of {config.max_iterations}" in text


def test_a_state_file_from_before_reservations_loads_with_none() -> None:
    data = {
        "goal": "g",
        "current_task": "T1",
        "base_sha": "b",
        "task_base_sha": "b",
        "worktree": "/w",
        "model": "m",
        "schema_version": 2,
    }
    assert parse_state(migrate(data)).reservations == []


@pytest.mark.parametrize("usd", [-0.5, float("nan"), float("inf")])
def test_a_reservation_no_bridge_writes_is_refused(usd: float) -> None:
    from autopilot_codex import typedjson

    data = {
        "goal": "g",
        "current_task": "T1",
        "base_sha": "b",
        "task_base_sha": "b",
        "worktree": "/w",
        "model": "m",
        # A negative reservation would hand the loop budget headroom.
        "reservations": [{"token": "t", "pid": 1, "usd": usd, "deadline": 1.0}],
    }
    with pytest.raises(typedjson.Invalid):
        parse_state(migrate({**data, "schema_version": 2}))
