"""`status`: the loop's tasks, counters, last review and verdict, or the raw state.json."""

from __future__ import annotations

import json
from pathlib import Path

from .. import contract
from ..store import Store
from . import NO_LOOP, worktree_of


def status(*, cwd: str | Path, as_json: bool) -> str:
    store = Store(worktree_of(cwd))
    if as_json:
        # The file as stored, indented for reading; a damaged file is shown, not repaired.
        try:
            text = store.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return '{"status": "idle"}'
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return text.rstrip("\n")
    state = store.load()
    if state is None:
        return NO_LOOP
    done = set(state.completed_tasks)
    lines = [f"autopilot-codex: {state.status} — {contract.clip(state.goal, 200)}", "Tasks:"]
    for t in state.plan.tasks:
        mark = "x" if t.id in done else (">" if t.id == state.current_task else " ")
        lines.append(f"  [{mark}] {t.id}: {t.title}")
    owner = state.session_id[:8] if state.session_id else "unclaimed"
    lines.append(
        f"Iteration {state.iteration}/{state.max_iterations} · budget ${state.budget_used_usd:.2f} / "
        f"${state.budget_usd:.2f} · review {state.review_mode} · session {owner}"
    )
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
            f"Last verdict: {v.decision} (iteration {v.iteration}) — {contract.clip(v.reason, 200)}"
        )
    if state.stop_reason:
        lines.append(f"Stop reason: {state.stop_reason}")
    lines.append(f"State: {store.state_path}")
    return "\n".join(lines)


