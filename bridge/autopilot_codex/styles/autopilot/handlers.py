"""The autopilot style's hooks: lock, guard, ask the manager, reduce, answer.

The lock is never held during a manager call, so parallel hooks and `codex-stop` are never
kept waiting on the network; the answer is applied only if the loop is still the same one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import contract, gitrepo, guards
from ...config import for_loop
from ...guards import Decision
from ...hookio import ALLOW, Answer
from ...state import State, now_iso
from ...store import Store
from .. import HookContext
from . import reducer

if TYPE_CHECKING:
    from ...manager import Outcome
    from ...manager.prompts import Prompt


def handle(ctx: HookContext) -> Answer:
    event = ctx.payload.event
    if event == "Stop":
        return answer_of(on_stop(ctx))
    if event == "PostToolUse":
        return answer_of(on_post_tool(ctx))
    if event == "PostToolUseFailure":
        # A failed tool is work too (a red test run): it resets the stall count, no review.
        on_tool_failure(ctx)
        return ALLOW
    if event == "PreCompact":
        on_pre_compact(ctx)
        return ALLOW
    if event == "SessionStart":
        return Answer(context=on_session_start(ctx))
    return ALLOW


def answer_of(decision: Decision) -> Answer:
    if decision.blocks:
        return Answer(block=decision.reason, message=decision.message)
    return Answer(context=decision.context, message=decision.message)


# -- events ---------------------------------------------------------------------------------


def on_session_start(ctx: HookContext) -> str:
    """After a compaction or resume, put the current task back in front of the implementer."""
    if ctx.payload.source not in ("compact", "resume", "clear"):
        return ""
    with ctx.store.locked():
        state = ctx.store.load()
        if (
            state is None
            or state.status != "running"
            or not guards.owns(state, ctx.payload.session_id)
        ):
            return ""
        ctx.store.append_event(
            "session.context", source=ctx.payload.source, session=ctx.payload.session_id
        )
    task = state.task()
    if task is None:
        return ""
    return (
        f"{contract.PREFIX} An autopilot loop is running (goal: {contract.clip(state.goal, 300)}). "
        "Your current task:\n" + contract.task_contract(task, state.task_position())
    )


def on_pre_compact(ctx: HookContext) -> None:
    with ctx.store.locked():
        state = _owned(ctx)
        if state is None:
            return
        ctx.store.save(guards.on_compact(guards.claim(state, ctx.payload.session_id or "")))
        ctx.store.append_event(
            "compact", trigger=ctx.payload.trigger, session=ctx.payload.session_id
        )


def on_tool_failure(ctx: HookContext) -> None:
    with ctx.store.locked():
        state = _owned(ctx)
        if state is not None:
            ctx.store.save(guards.on_tool(guards.claim(state, ctx.payload.session_id or "")))


def on_post_tool(ctx: HookContext) -> Decision:
    payload = ctx.payload
    with ctx.store.locked():
        state = _owned(ctx)
        if state is None:
            return guards.allow("ignored")
        state = guards.on_tool(guards.claim(state, payload.session_id or ""))
        mode = _review_mode(state)
        wants = (mode == "edit" and payload.tool_name in ctx.host.edit_tools) or (
            mode == "commit" and payload.tool_name in ctx.host.shell_tools
        )
        if not wants:
            ctx.store.save(state)
            return guards.allow("tool")
        repo = ctx.store.worktree
        if mode == "commit":
            head = gitrepo.head_sha(repo)
            if head == state.last_review_head or head == state.task_base_sha:
                ctx.store.save(state)
                return guards.allow("tool")
            state = state.evolve(last_review_head=head)
        step = _prepare_review(ctx, state, repo, at_stop=False)
    return _resolve(ctx, step)


def on_stop(ctx: HookContext) -> Decision:
    payload = ctx.payload
    with ctx.store.locked():
        state = _owned(ctx)
        if state is None:
            return guards.allow("ignored")
        state = guards.claim(state, payload.session_id or "")
        state, guarded = guards.stop_guard(
            state, stop_hook_active=payload.stop_hook_active, limits=ctx.limits
        )
        if guarded is not None:
            return _finish(ctx, state, guarded)
        repo = ctx.store.worktree
        review_first = _review_mode(state) == "stop"
        step = (
            _prepare_review(ctx, state, repo, at_stop=True)
            if review_first
            else _prepare_verdict(ctx, state, repo)
        )
    decision = _resolve(ctx, step)
    if not review_first or decision.blocks or decision.event not in REVIEW_PASSED:
        return decision
    with ctx.store.locked():
        state = _owned(ctx)
        if state is None:
            return decision
        step = _prepare_verdict(ctx, state, ctx.store.worktree)
    return _resolve(ctx, step)


# Review outcomes after which a Stop in `stop` review mode goes on to ask for a verdict.
REVIEW_PASSED = frozenset({"review.approve", "review.cached", "review.empty"})


# -- shared steps ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Pending:
    """A manager call prepared under the lock, to be made after the lock is released."""

    state: State
    # "Review" or "Verdict": the pydantic schema is imported only when the call is made.
    schema: str
    prompt: Prompt
    reduce: Callable[[State, Outcome[Any]], guards.Step]
    event: str


def _prepare_review(ctx: HookContext, state: State, repo: Path, *, at_stop: bool) -> Decision | Pending:
    """Review the task's diff unless it is empty or was reviewed before."""
    diff = gitrepo.diff_since(repo, state.task_base_sha, exclude=_excluded(ctx.store))
    if diff.empty:
        ctx.store.save(state)
        return guards.allow("review.empty")
    cached = state.cached_review(diff.digest)
    if cached is not None:
        state, decision = reducer.replay_cached(state, cached, at_stop=at_stop)
        state = ctx.store.save(state)
        _record(ctx, state, decision, None)
        return decision
    from ...manager import prompts

    state = ctx.store.with_plan(state)
    prompt = prompts.review_prompt(
        state.goal,
        state.plan,
        state.task(),
        state.task_position(),
        diff.text,
        ctx.config.prompt_chars,
    )

    limits = ctx.limits

    def reduce(s: State, outcome: Outcome[Any]) -> guards.Step:
        return reducer.apply_review(
            s,
            outcome,
            diff.digest,
            now=now_iso(),
            limits=limits,
            at_stop=at_stop,
            changed_files=diff.files,
        )

    return _pending(ctx, state, "review", "Review", prompt, reduce)


def _prepare_verdict(ctx: HookContext, state: State, repo: Path) -> Decision | Pending:
    state = ctx.store.with_plan(state)
    state, checks_text, checks_red = _evidence(ctx, state)
    head = gitrepo.head_sha(repo)
    diff = gitrepo.diff_since(repo, state.task_base_sha, exclude=_excluded(ctx.store))
    from ...manager import prompts

    prompt = prompts.verdict_prompt(
        state.goal,
        state.plan,
        state.task(),
        state.task_position(),
        completed=state.completed_tasks,
        commits=gitrepo.commits_since(repo, state.base_sha),
        diff=diff.text,
        last_message=ctx.payload.last_assistant_message,
        last_review=state.last_review.summary if state.last_review else "",
        cap=ctx.config.prompt_chars,
        checks=checks_text,
    )
    limits = ctx.limits

    def reduce(s: State, outcome: Outcome[Any]) -> guards.Step:
        s = s.evolve(last_checks=state.last_checks)
        return reducer.apply_verdict(s, outcome, head, limits, now=now_iso(), checks_red=checks_red)

    return _pending(ctx, state, "verdict", "Verdict", prompt, reduce)


def _evidence(ctx: HookContext, state: State) -> tuple[State, str, str]:
    """The user's checks on this tree, before the verdict (at every verdict Stop: whether the
    manager would end the loop or advance is only known after it; an unchanged tree reruns
    nothing). The state with their results, the prompt's evidence, and the failure text."""
    if not state.checks:
        return state, "", ""
    from ...checks import evidence_text, failure_reason
    from ...evidence import gather

    calls = 2 if _review_mode(state) == "stop" else 1
    timeout = for_loop(state, os.environ, ctx.config).timeout_s
    state, results = gather(ctx.store, state, manager_calls=calls, call_timeout_s=timeout)
    return state, evidence_text(results), failure_reason(results)


def _pending(
    ctx: HookContext,
    state: State,
    kind: str,
    schema: str,
    prompt: Prompt,
    reduce: Callable[[State, Outcome[Any]], guards.Step],
) -> Decision | Pending:
    """Refuse a call the budget cannot cover; otherwise save and hand the call back."""
    from ...manager.select import worst_case_usd

    # Priced by the backend that will answer, with what it adds beyond our prompt and caps.
    text = prompt.instructions + prompt.text
    estimate = worst_case_usd(ctx.config, state.model, text, ctx.config.max_output_tokens)
    blocked = guards.budget_guard(state, estimate, f"{kind}.budget")
    if blocked is not None:
        return _finish(ctx, *blocked)
    state = ctx.store.save(state)
    return Pending(state, schema, prompt, reduce, kind)


def _resolve(ctx: HookContext, step: Decision | Pending) -> Decision:
    """Make the prepared call without the lock, then apply it if the loop is still the same."""
    if isinstance(step, Decision):
        return step
    from ...manager import schemas

    # What the loop was planned with (api, server, timeout), unless this hook's environment
    # says otherwise: a session started without the planning shell's variables still works.
    manager = ctx.manager(step.state.model, for_loop(step.state, os.environ, ctx.config))
    schema = schemas.Review if step.schema == "Review" else schemas.Verdict
    outcome: Outcome[Any] = manager.ask(schema, step.prompt.instructions, step.prompt.text)
    with ctx.store.locked():
        state = ctx.store.load()
        if state is None:
            return guards.allow(f"{step.event}.orphaned")
        if state.generation != step.state.generation or state.status != "running":
            # Stopped or re-planned while the manager thought: the money is spent, the answer is moot.
            state = ctx.store.save(guards.charge(state, outcome.cost_usd))
            decision = guards.allow(f"{step.event}.discarded")
            _record(ctx, state, decision, outcome)
            return decision
        state, decision = step.reduce(state, outcome)
        state = ctx.store.save(state)
        _record(ctx, state, decision, outcome)
        return decision


def _finish(ctx: HookContext, state: State, decision: Decision) -> Decision:
    saved = ctx.store.save(state)
    _record(ctx, saved, decision, None)
    return decision


def _owned(ctx: HookContext) -> State | None:
    """The running loop this hook's session owns, without its plan (few hooks need it)."""
    state = ctx.store.load(with_plan=False)
    if state is None or state.status != "running" or not guards.owns(state, ctx.payload.session_id):
        return None
    return state


def _review_mode(state: State) -> str:
    return os.environ.get("AUTOPILOT_CODEX_REVIEW", "").strip() or state.review_mode


def _excluded(store: Store) -> tuple[str, ...]:
    """Keep the loop's own files out of every diff when the state home sits inside the repo."""
    try:
        relative = store.home.resolve().relative_to(store.worktree.resolve())
    except ValueError:
        return ()
    return (str(relative),)


def _record(ctx: HookContext, state: State, decision: Decision, outcome: Outcome[Any] | None) -> None:
    fields: dict[str, object] = {
        "decision": decision.action,
        "reason": contract.clip(decision.reason or decision.message, 300),
        "status": state.status,
        "iteration": state.iteration,
        "budget_used_usd": round(state.budget_used_usd, 6),
        "session": ctx.payload.session_id,
    }
    if decision.note:
        fields["note"] = decision.note
    if outcome is not None:
        fields.update(
            tokens_in=outcome.usage.input_tokens,
            tokens_out=outcome.usage.output_tokens,
            cost_usd=round(outcome.cost_usd, 6),
            error=outcome.error,
        )
    ctx.store.append_event(decision.event, **fields)
