"""`status`: the loop's tasks, counters, last review and verdict, or the raw state.json (with
the loop's spend under `spend`)."""

from __future__ import annotations

import json
from pathlib import Path

from .. import contract, hosts
from ..errors import BridgeError
from ..meters import clock, duration, elapsed, spend_lines, total_usd
from ..spend import of_state
from ..state import State
from ..store import Store
from . import TERMINAL, entry, no_loop, worktree_of


def status(*, cwd: str | Path, as_json: bool) -> str:
    store = Store(worktree_of(cwd))
    if as_json:
        return _raw(store)
    state = store.load()
    if state is None:
        return rails_only(store) or no_loop()
    from ..shadow.hook import lost_lines

    return "\n".join([_text(state, store), *lost_lines(store.tail_events(200))])


def _text(state: State, store: Store) -> str:
    if state.style == "ralph":
        from ..styles.ralph.view import status_text

        return status_text(state, store)
    if state.style == "rounds":
        return _rounds_text(state, store)
    done = set(state.completed_tasks)
    lines = [f"autopilot-codex: {state.status} — {contract.clip(state.goal, 200)}", "Tasks:"]
    for t in state.plan.tasks:
        mark = "x" if t.id in done else (">" if t.id == state.current_task else " ")
        lines.append(f"  [{mark}] {t.id}: {t.title}")
    owner = (
        f"{state.session_id[:8]} in {hosts.label(state.host)}" if state.session_id else "unclaimed"
    )
    lines.append(
        f"Iteration {state.iteration}/{state.max_iterations} · spent "
        f"{of_state(state).total_text()} · review {state.review_mode} · session {owner}"
    )
    lines += spend_lines(state, state.budget_usd, store.tail_events(20), hosts.get(state.host))
    if state.consultations_total:
        task = state.consultations if state.consultations_task == state.current_task else 0
        lines.append(f"Consultations: {task} this task, {state.consultations_total} in all (ask)")
    if state.last_review:
        lines.append(
            f"Last review: {state.last_review.decision} — {contract.clip(state.last_review.summary, 200)}"
        )
    if state.last_verdict:
        v = state.last_verdict
        lines.append(
            f"Last verdict: {_claimed(state)} (iteration {v.iteration}) — "
            f"{contract.clip(v.reason, 200)}"
        )
    from ..checks.run import status_lines
    from ..hostwall import status_line

    lines += [line for line in (status_line(state.wall, state.wall_missing),) if line]
    lines += status_lines(state)
    from ..styles.autopilot.findings_store import view_lines

    lines += view_lines(store, state)
    lines += _questions(store)
    if state.status == "running":
        from ..session_end import line

        lines += [t for t in (line(store.tail_events(50), state.session_id),) if t]
    if state.stop_reason:
        lines.append(f"Stop reason: {state.stop_reason}")
    lines.append(f"State: {store.state_path}")
    hint = next_step(state)
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
    assert state.last_verdict is not None
    decision = state.last_verdict.decision
    if decision != "done" or state.status == "done":
        return decision
    red = [r.command for r in state.last_checks if r.status != "pass"]
    return f"done, overruled by the red check `{red[0]}`" if red else "done, not accepted"


def rails_only(store: Store) -> str | None:
    """No loop to show, but the rails of one are kept on (its state damaged and moved aside,
    or gone): what is kept on, why, and how to end it. None when nothing is kept on."""
    if not store.guarded():
        return None
    # Named by the time they were moved aside: the last in order is the newest.
    aside = sorted(p.name for p in store.dir.glob("state.json.corrupt-*"))
    why = (
        f"its state.json was damaged and moved aside to {aside[-1]}"
        if aside
        else "its state.json is gone"
    )
    return (
        f"autopilot-codex: no loop drives this worktree, but the safety rails of the last one "
        f"stay on ({why}): pushes and the other guarded commands are still denied, as they were "
        f"while it ran. A damaged state never switches them off. End them with "
        f"{entry('stop')}, or start a new loop with {entry('plan')} <goal>."
    )


def _rounds_text(state: State, store: Store) -> str:
    from ..rounds import caps
    from ..rounds import rollout as rounds_rollout

    rollout = store.dir / "rounds" / "rollout.jsonl"
    try:
        log = rounds_rollout.last_run(rollout)
    except BridgeError:
        log = None  # `run --resume` says what is wrong with it
    meters_ = caps.status_lines(log, clock()) if log is not None else []
    if state.status == "running":
        held = f"Held by the run's driver; see {rollout}."
    elif state.status in TERMINAL:
        held = f"Ended; see {rollout}. Next: a new goal with `autopilot-codex run <goal>`."
    else:  # interrupted (Ctrl-C), stopped or at a cap: the driver is gone, the run can go on
        held = f"Not running; see {rollout}."
        if not any(line.startswith("Next:") for line in meters_):
            held += " Next: `autopilot-codex run --resume`."
    return "\n".join(
        [
            f"autopilot-codex: rounds run {state.status} — {contract.clip(state.goal, 200)}",
            *meters_,
            f"{held} State: {store.state_path}",
        ]
    )


def _raw(store: Store) -> str:
    """The file as stored, indented for reading; a damaged file is shown, not repaired."""
    try:
        text = store.state_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return '{"status": "idle"}'
    try:
        data = json.loads(text)
    except ValueError:
        return text.rstrip("\n")
    if isinstance(data, dict):
        # The one spend figure every view shows (`spend`), beside the file's own meters.
        from .. import loopfiles
        from ..spend import of_files

        data["spend"] = of_files(loopfiles.load(store.dir)).as_json()
    return json.dumps(data, indent=2, ensure_ascii=False)


def next_step(state: State) -> str:
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
