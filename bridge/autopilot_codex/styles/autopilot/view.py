"""How `status` shows an autopilot loop: its tasks, counters, last review and verdict, its
questions, and the exact command that moves it on."""

from __future__ import annotations

from collections.abc import Callable

from ... import contract, hosts
from ...meters import clock, duration, elapsed, spend_lines, total_usd
from ...spend import of_state
from ...state import State
from ...store import Store
from .record import of

TERMINAL = ("done", "aborted")


def status_text(state: State, store: Store, entry: Callable[[str], str]) -> str:
    own = of(state)
    done = set(own.completed_tasks)
    lines = [f"autopilot-codex: {state.status} — {contract.clip(state.goal, 200)}", "Tasks:"]
    for t in state.plan.tasks:
        mark = "x" if t.id in done else (">" if t.id == own.current_task else " ")
        lines.append(f"  [{mark}] {t.id}: {t.title}")
    owner = (
        f"{state.session_id[:8]} in {hosts.label(state.host)}" if state.session_id else "unclaimed"
    )
    lines.append(
        f"Iteration {state.iteration}/{state.max_iterations} · spent "
        f"{of_state(state).total_text()} · review {own.review_mode} · session {owner}"
    )
    lines += spend_lines(state, state.budget_usd, store.tail_events(20), hosts.get(state.host))
    if own.consultations_total:
        task = own.consultations if own.consultations_task == own.current_task else 0
        lines.append(f"Consultations: {task} this task, {own.consultations_total} in all (ask)")
    if review := own.last_review:
        lines.append(f"Last review: {review.decision} — {contract.clip(review.summary, 200)}")
    if v := own.last_verdict:
        lines.append(
            f"Last verdict: {_claimed(state)} (iteration {v.iteration}) — "
            f"{contract.clip(v.reason, 200)}"
        )
    from ...checks.run import status_lines
    from ...hostwall import status_line

    lines += [line for line in (status_line(state.wall, state.wall_missing),) if line]
    lines += status_lines(state)
    from .findings_store import view_lines

    lines += view_lines(store, state)
    lines += _questions(store)
    if state.status == "running":
        from ...session_end import line

        lines += [t for t in (line(store.tail_events(50), state.session_id),) if t]
    if state.stop_reason:
        lines.append(f"Stop reason: {state.stop_reason}")
    lines.append(f"State: {store.state_path}")
    hint = next_step(state, entry)
    if hint:
        lines.append(hint)
    return "\n".join(lines)


def _questions(store: Store) -> list[str]:
    """The implementer's last question the manager answered (or left to the user)."""
    asked = [
        e
        for e in store.tail_events(200)
        if e.get("event") in ("question.answered", "question.to_user")
    ]
    if not asked:
        return []
    last = asked[-1]
    question = contract.clip(str(last.get("question", "")).replace("\n", " "), 200)
    if last.get("event") == "question.to_user":
        return [f"Question for you: {question}"]
    answer = contract.clip(str(last.get("answer", "")).replace("\n", " "), 200)
    return [f"Last question ({len(asked)} answered or asked): {question} → {answer}"]


def _claimed(state: State) -> str:
    """The last verdict's decision, and when the loop did not end with it, why: a `done` a red
    check overruled must not read as the loop's result."""
    verdict = of(state).last_verdict
    assert verdict is not None
    decision = verdict.decision
    if decision != "done" or state.status == "done":
        return decision
    red = [r.command for r in state.last_checks if r.status != "pass"]
    return f"done, overruled by the red check `{red[0]}`" if red else "done, not accepted"


def next_step(state: State, entry: Callable[[str], str]) -> str:
    """The exact command that moves a loop that is not running on."""
    if state.status == "running":
        return ""
    if state.status in TERMINAL:
        return f"Next: plan a new goal with {entry('plan')} <goal>"
    fix = ""
    if total_usd(state) >= state.budget_usd:
        fix = f" --budget {max(state.budget_usd * 2, total_usd(state) + 1):.2f}"
    elif state.iteration >= state.max_iterations:
        fix = f" --max-iterations {state.max_iterations + 10}"
    elif state.status == "stopped_tokens" and state.max_tokens:
        fix = f" --max-tokens {max(state.max_tokens, state.implementer_tokens) * 2}"
    elif state.status == "stopped_duration" and state.max_seconds:
        # Counted from the loop's start: the new cap must be past the time already gone.
        fix = f" --max-duration {duration(elapsed(state, clock()) + 3600)}"
    return (
        f"Next: resume with {entry('resume')}{fix}, or plan a new goal with {entry('plan')} <goal>"
    )
