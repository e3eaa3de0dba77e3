"""The steps the autopilot hooks share: prepare a manager call under the lock, make it
without the lock, apply the answer if the loop is still the same one, and record it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import contract, gitrepo, guards
from ...check_records import CheckResult
from ...config import for_loop
from ...guards import Decision
from ...state import State, now_iso
from ..context import HookContext
from . import findings_store, inflight, reducer
from .convergence import Rules, count_turn

if TYPE_CHECKING:
    from ...manager import Outcome
    from ...manager.prompts import Prompt


# Review outcomes after which a Stop goes on to ask for a verdict.
REVIEW_PASSED = frozenset(
    {"review.approve", "review.cached", "review.empty", "review.disputed.passed"}
)


@dataclass(frozen=True)
class Pending:
    """A manager call prepared under the lock, to be made after the lock is released."""

    state: State
    # "Review" or "Verdict": the pydantic schema is imported only when the call is made.
    schema: str
    prompt: Prompt
    reduce: Callable[[State, Outcome[Any]], guards.Step]
    event: str


def prepare_review(
    ctx: HookContext, state: State, repo: Path, *, at_stop: bool, token: str = ""
) -> Decision | Pending:
    """Review the task's diff unless it is empty or was reviewed before."""
    diff = gitrepo.diff_since(repo, state.task_base_sha, exclude=ctx.store.excluded())
    if diff.empty:
        ctx.store.save(state)
        return guards.allow("review.empty")
    key = diff_key(diff)
    head = gitrepo.head_sha(repo)
    cached = state.cached_review(key)
    if cached is not None:
        state, decision = reducer.replay_cached(state, cached, at_stop=False)
        state, decision = findings_store.replayed(ctx.store, state, decision, Rules.of(ctx.config))
        state = ctx.store.save(count_turn(state, decision, at_stop, head))
        record(ctx, state, decision, None)
        return decision
    state = ctx.store.with_plan(state)
    prompt = review_prompt(ctx, state, diff.text, diff.files)
    log_git_findings(ctx, diff)
    limits = ctx.limits

    def reduce(s: State, outcome: Outcome[Any]) -> guards.Step:
        now = now_iso()
        step = reducer.apply_review(
            s, outcome, key, now=now, limits=limits, changed_files=diff.files
        )
        # The finding ledger and the convergence rules (issue 23), then the turn's count.
        return findings_store.judged(
            ctx.store,
            step,
            outcome.value,
            diff_key=key,
            now=now,
            changed_files=diff.files,
            at_stop=at_stop,
            head=head,
            rules=Rules.of(ctx.config),
        )

    return pending(ctx, state, "review", "Review", prompt, reduce, token)


def log_git_findings(ctx: HookContext, diff: gitrepo.Diff) -> None:
    """Settings in the git directory that run programs or hide changes: an event of their own
    for the user, once per review (the manager reads them in the diff's closing section)."""
    if diff.findings:
        ctx.store.append_event(
            "git_tamper",
            findings=[f.line() for f in diff.findings],
            session=ctx.payload.session_id,
        )


def diff_key(diff: gitrepo.Diff) -> str:
    """What makes two diffs the same change for the review cache: the same files with the same
    lines. A new file reads differently untracked and committed (git adds its mode and blob
    ids, and sorts it among the tracked files), and committing it must not cost a review."""
    sections = ("\n" + diff.text).split("\ndiff --git ")
    kept = []
    for section in sections:
        lines = [
            _same_line(line)
            for line in section.splitlines()
            if not line.startswith(("index ", "\\ No newline"))
        ]
        kept.append("\n".join(lines))
    text = "\ndiff --git ".join(sorted(kept))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _same_line(line: str) -> str:
    if line.startswith("new file"):
        return "new file"
    if line == "@@ -0,0 +1,1 @@":
        return "@@ -0,0 +1 @@"  # git leaves out a count of one
    return line


def review_prompt(
    ctx: HookContext, state: State, diff_text: str, files: Sequence[str] = ()
) -> Prompt:
    from ...manager import prompts

    return prompts.review_prompt(
        state.goal,
        state.plan,
        state.task(),
        state.task_position(),
        diff_text,
        ctx.config.prompt_chars,
        ledger=findings_prompt(ctx, state, files),
    )


def findings_prompt(ctx: HookContext, state: State, files: Sequence[str]) -> str:
    """The task's standing findings, and what earlier tasks changed (context, not subject)."""
    from ...manager.prompts import ledger_text
    from .findings import listing

    ledger = findings_store.load(ctx.store, state)
    others: list[str] = []
    if state.base_sha != state.task_base_sha:
        loop = gitrepo.diff_since(ctx.store.worktree, state.base_sha, exclude=ctx.store.excluded())
        others = [f for f in loop.files if f not in set(files)]
    return ledger_text(listing(ledger, state.current_task or "wrap-up"), others)


def prepare_verdict(ctx: HookContext, state: State, repo: Path, token: str) -> Decision | Pending:
    state = ctx.store.with_plan(state)
    state, checks_text, checks_red = evidence(ctx, state)
    head = gitrepo.head_sha(repo)
    diff = gitrepo.diff_since(repo, state.task_base_sha, exclude=ctx.store.excluded())
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
        last_review=findings_store.with_standing(
            ctx.store, state, state.last_review.summary if state.last_review else ""
        ),
        cap=ctx.config.prompt_chars,
        checks=checks_text,
    )
    limits = ctx.limits

    def reduce(s: State, outcome: Outcome[Any]) -> guards.Step:
        s = s.evolve(last_checks=state.last_checks)
        return reducer.apply_verdict(
            s, outcome, head, limits, now=now_iso(), checks_red=checks_red
        )

    return pending(ctx, state, "verdict", "Verdict", prompt, reduce, token)


def evidence(ctx: HookContext, state: State) -> tuple[State, str, str]:
    """The user's checks on this tree, before the verdict (at every verdict Stop: whether the
    manager would end the loop or advance is only known after it; an unchanged tree reruns
    nothing). The state with their results, the prompt's evidence, and the failure text."""
    if not state.checks:
        return state, "", ""
    from ...checks import evidence_text, failure_reason

    results = checks_for(ctx, state)
    return state.evolve(last_checks=results), evidence_text(results), failure_reason(results)


def checks_for(ctx: HookContext, state: State) -> list[CheckResult]:
    """Run (or reuse, on an unchanged tree) the loop's checks, writing each fresh run to the
    ledger; the caller keeps the results in the state."""
    from ...evidence import gather

    calls = 2 if review_mode(state) == "stop" else 1
    timeout = for_loop(state, os.environ, ctx.config).timeout_s
    return gather(ctx.store, state, manager_calls=calls, call_timeout_s=timeout)[1]


def estimate(ctx: HookContext, state: State, prompt: Prompt) -> float:
    """The worst case of one call: what the budget guard checks and the slot reserves, priced
    by the backend that will answer, with what it adds beyond our prompt and caps."""
    from ...manager.select import worst_case_usd

    text = prompt.instructions + prompt.text
    return worst_case_usd(ctx.config, state.model, text, ctx.config.max_output_tokens)


def pending(
    ctx: HookContext,
    state: State,
    kind: str,
    schema: str,
    prompt: Prompt,
    reduce: Callable[[State, Outcome[Any]], guards.Step],
    token: str,
) -> Decision | Pending:
    """Refuse a call the budget cannot cover; otherwise reserve it, save, hand it back."""
    worst = estimate(ctx, state, prompt)
    blocked = guards.budget_guard(state, worst, f"{kind}.budget")
    if blocked is not None:
        return finish(ctx, *blocked)
    state = ctx.store.save(inflight.reserve(state, token, worst))
    return Pending(state, schema, prompt, reduce, kind)


def resolve(ctx: HookContext, step: Decision | Pending, token: str) -> Decision:
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
        # The real cost is charged below; a slot reclaimed meanwhile was charged its worst
        # case too, which errs on the side of the budget.
        state = inflight.settle(state, token)
        if state.generation != step.state.generation or state.status != "running":
            # Stopped or re-planned while the manager thought: the money is spent, the answer is moot.
            state = ctx.store.save(guards.charge(state, outcome.cost_usd))
            decision = guards.allow(f"{step.event}.discarded")
            record(ctx, state, decision, outcome)
            return decision
        state, decision = step.reduce(state, outcome)
        state = ctx.store.save(state)
        record(ctx, state, decision, outcome)
        return decision


def finish(ctx: HookContext, state: State, decision: Decision) -> Decision:
    saved = ctx.store.save(state)
    record(ctx, saved, decision, None)
    return decision


def owned(ctx: HookContext) -> State | None:
    """The running loop this hook's session owns, without its plan (few hooks need it)."""
    state = ctx.store.load(with_plan=False)
    if state is None or state.status != "running" or not guards.owns(state, ctx.payload.session_id):
        return None
    return state


def review_mode(state: State) -> str:
    return os.environ.get("AUTOPILOT_CODEX_REVIEW", "").strip() or state.review_mode


def record(
    ctx: HookContext, state: State, decision: Decision, outcome: Outcome[Any] | None
) -> None:
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
