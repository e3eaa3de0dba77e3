"""What the slash commands and the terminal CLI do: plan, status, next, stop, resume.

Each returns the text to print and raises BridgeError for what the user must fix.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import contract, gitrepo, loop
from .config import load_config
from .errors import BridgeError, StateCorrupt
from .hooks import default_manager
from .manager import prompts
from .manager.pricing import price_for, worst_case_usd
from .paths import find_worktree
from .state import Plan, State, Store, Task

if TYPE_CHECKING:
    from .manager.select import ManagerFactory

PLAN_OUTPUT_TOKENS = 8_000
NO_LOOP = (
    "autopilot-codex: no loop in this worktree. Start one with /autopilot-codex:codex-plan <goal>"
)
TERMINAL = ("done", "aborted")


def worktree_of(cwd: str | Path) -> Path:
    worktree = find_worktree(cwd)
    if worktree is None:
        raise BridgeError(
            f"{cwd} is not inside a git repository; autopilot-codex needs one (run `git init`)"
        )
    return worktree


def plan(
    *,
    cwd: str | Path,
    goal: str,
    overrides: dict[str, Any],
    session_id: str | None,
    host: str = "claude",
    manager: ManagerFactory = default_manager,
) -> str:
    # The goal is stored and shown; a credential pasted into it must not be.
    goal = prompts.redact(goal.strip())
    if not goal:
        raise BridgeError("give a goal: /autopilot-codex:codex-plan <goal> [--budget USD]")
    worktree = worktree_of(cwd)
    config = load_config(overrides)
    store = Store(worktree, lock_timeout=config.lock_timeout_s)
    if manager is default_manager:
        from .manager.select import configured_problem

        problem = configured_problem(config)
        if problem:
            raise BridgeError(problem)
    base = gitrepo.head_sha(worktree)
    previous = _previous(store)
    files, count = gitrepo.tracked_files(worktree)
    recent = gitrepo.commits_since(worktree, gitrepo.EMPTY_TREE, limit=10)
    prompt = prompts.plan_prompt(goal, files, count, recent, config.prompt_chars)
    # A plan is the one long answer: give it room, and budget for that room.
    config = dataclasses.replace(
        config, max_output_tokens=max(PLAN_OUTPUT_TOKENS, config.max_output_tokens)
    )
    estimate = worst_case_usd(
        prompt.instructions + prompt.text, config.max_output_tokens, price_for(config.model)
    )
    if estimate > config.budget_usd:
        raise BridgeError(
            f"the budget ${config.budget_usd:.2f} cannot cover even the plan (~${estimate:.2f})"
        )
    from .manager import schemas

    outcome = manager(config.model, config).ask(schemas.Plan, prompt.instructions, prompt.text)
    if outcome.value is None or not outcome.value.tasks:
        error = outcome.error or "the plan had no tasks"
        store.append_event("plan.failed", error=error, cost_usd=round(outcome.cost_usd, 6))
        raise BridgeError(
            f"the manager could not plan: {error} (spent ${outcome.cost_usd:.4f}); no loop started"
        )
    planned: Plan = Plan.of(outcome.value)
    tasks = _unique_ids(planned.tasks)
    state = State(
        goal=goal,
        plan=Plan(summary=planned.summary, tasks=tasks),
        current_task=tasks[0].id,
        base_sha=base,
        task_base_sha=base,
        max_iterations=config.max_iterations,
        budget_usd=config.budget_usd,
        budget_used_usd=outcome.cost_usd,
        session_id=session_id or None,
        host=host,
        worktree=str(worktree),
        model=config.model,
        review_mode=config.review,
        generation=(previous.generation + 1) if previous else 1,
    )
    with store.locked():
        current = store.load()
        if current is not None and current.status == "running":
            raise BridgeError(
                "a loop started here meanwhile; stop it first with /autopilot-codex:codex-stop"
            )
        store.save_plan(state.plan)
        state = store.save(state)
        store.append_event(
            "plan",
            decision="running",
            tasks=len(tasks),
            tokens_in=outcome.usage.input_tokens,
            tokens_out=outcome.usage.output_tokens,
            cost_usd=round(outcome.cost_usd, 6),
            session=state.session_id,
        )
    return render_plan(state)


def _previous(store: Store) -> State | None:
    with store.locked():
        try:
            previous = store.load()
        except StateCorrupt:
            return None  # moved aside; a new plan starts clean
    if previous is not None and previous.status == "running":
        raise BridgeError(
            f"a loop is already running here (goal: {contract.clip(previous.goal, 80)}); "
            "stop it first with /autopilot-codex:codex-stop"
        )
    return previous


def _unique_ids(tasks: list[Task]) -> list[Task]:
    ids = [t.id.strip() for t in tasks]
    if all(ids) and len(set(ids)) == len(ids):
        return tasks
    return [t.evolve(id=f"T{i}") for i, t in enumerate(tasks, 1)]


def render_plan(state: State) -> str:
    task = state.task()
    assert task is not None
    lines = [
        f"autopilot-codex: loop started. Budget ${state.budget_usd:.2f}, at most "
        f"{state.max_iterations} iterations, review mode {state.review_mode}, manager {state.model}.",
        f"Goal: {state.goal}",
        f"Plan: {state.plan.summary}",
        *(f"  {'>' if t.id == task.id else ' '} {t.id}: {t.title}" for t in state.plan.tasks),
        "",
        "Implement this task now:",
        contract.task_contract(task, state.task_position()),
        "",
        "Every edit is reviewed by the manager; when you end your turn it decides whether to "
        "continue, finish or abort. Follow its feedback.",
    ]
    return "\n".join(lines)


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


def next_task(*, cwd: str | Path) -> str:
    state = Store(worktree_of(cwd)).load()
    if state is None:
        return NO_LOOP
    task = state.task()
    if task is None:
        return f"autopilot-codex: {state.status}; no current task."
    return f"autopilot-codex ({state.status}):\n" + contract.task_contract(
        task, state.task_position()
    )


def stop(*, cwd: str | Path, reason: str) -> str:
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.load()
        if state is None or state.status not in ("running", "paused"):
            return "autopilot-codex: no running loop here; nothing to stop."
        why = reason.strip() or "stopped by the user"
        state = store.save(state.evolve(status="stopped", stop_reason=why))
        store.append_event("stop", decision="stopped", reason=why)
    return (
        f"autopilot-codex: loop stopped ({why}). The hooks are no-ops from now on; "
        f"state kept at {store.state_path}. Resume with /autopilot-codex:codex-resume."
    )


def resume(
    *, cwd: str | Path, budget_usd: float | None, max_iterations: int | None, session_id: str | None
) -> str:
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.load()
        if state is None:
            return NO_LOOP
        if state.status == "running":
            return "autopilot-codex: the loop is already running."
        if state.status in TERMINAL:
            raise BridgeError(
                f"the loop is {state.status}; plan a new goal with /autopilot-codex:codex-plan"
            )
        budget = budget_usd if budget_usd is not None else state.budget_usd
        if budget <= state.budget_used_usd:
            raise BridgeError(
                f"the budget is used up (${state.budget_used_usd:.2f} of ${state.budget_usd:.2f}); "
                "resume with a larger one: --budget USD"
            )
        iterations = max_iterations if max_iterations is not None else state.max_iterations
        if iterations <= state.iteration:
            raise BridgeError(
                f"the iteration limit {state.max_iterations} is reached; resume with --max-iterations N"
            )
        resumed = loop.resume(state, budget_usd=budget_usd, max_iterations=max_iterations)
        # The session that resumes may not be the one that planned: ownership is claimed afresh.
        resumed = resumed.evolve(session_id=session_id or None)
        resumed = store.save(resumed)
        store.append_event("resume", decision="running", previous=state.status)
    task = resumed.task()
    text = f"autopilot-codex: loop resumed (was {state.status})."
    if task is not None:
        text += "\nContinue with:\n" + contract.task_contract(task, resumed.task_position())
    return text
