"""What the autopilot hooks share (the Stop in `stop`, the edit hooks in `handlers`, the
background review in `background`): whose loop it is, the review mode, the diff's cache key,
the review prompt and its price, and the event line each decision leaves.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ... import contract, gitrepo, guards
from ...guards import Decision
from ...state import State
from ..context import HookContext
from . import findings_store
from .record import of, position_of, task_of

if TYPE_CHECKING:
    from ...manager import Outcome
    from ...manager.prompts import Prompt
    from ...store import Store


# The most of one verdict's or review's words the ledger keeps.
LEDGER_TEXT = 20_000


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
        task_of(state),
        position_of(state),
        diff_text,
        ctx.config.prompt_chars,
        ledger=findings_prompt(ctx, state, files),
    )


def findings_prompt(ctx: HookContext, state: State, files: Sequence[str]) -> str:
    """The task's standing findings, and what earlier tasks changed (context, not subject)."""
    from ...manager.prompts import ledger_text
    from .findings import advisory_lines, listing

    ledger = findings_store.load(ctx.store, state)
    others: list[str] = []
    if state.base_sha != of(state).task_base_sha:
        loop = gitrepo.changed_names(ctx.store.worktree, state.base_sha, exclude=ctx.store.excluded())
        others = [f for f in loop if f not in set(files)]
    repeated = advisory_lines(ledger, just_repeated=True)
    return ledger_text(listing(ledger, of(state).current_task or "wrap-up"), others, repeated)


def estimate(ctx: HookContext, state: State, prompt: Prompt) -> float:
    """The worst case of one call: what the budget guard checks and the slot reserves, priced
    by the backend that will answer, with what it adds beyond our prompt and caps."""
    from ...manager.select import worst_case_usd

    text = prompt.instructions + prompt.text
    return worst_case_usd(ctx.config, of(state).model, text, ctx.config.max_output_tokens)


def owned(ctx: HookContext) -> State | None:
    """The running loop this hook's session owns, without its plan (few hooks need it)."""
    state = ctx.store.load(with_plan=False)
    if state is None or state.status != "running" or not guards.owns(state, ctx.payload.session_id):
        return None
    return state


def review_mode(state: State, environ: Mapping[str, str] = os.environ) -> str:
    return environ.get("AUTOPILOT_CODEX_REVIEW", "").strip() or of(state).review_mode


def record(
    ctx: HookContext, state: State, decision: Decision, outcome: Outcome[Any] | None
) -> None:
    fields: dict[str, object] = {
        "decision": decision.action,
        # The whole text, for the report and `logs`: only what reaches the implementer is
        # clipped. Bounded all the same, so one answer cannot fill the ledger.
        "reason": contract.clip(decision.reason or decision.message, LEDGER_TEXT),
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


def reclaimed(store: Store, session: str | None, state: State, now: float) -> State:
    """The loop with the manager calls of dead or overdue processes taken back and charged at
    their worst case: `ask` reservations and the review/verdict slot, each logged."""
    from . import inflight

    state, gone = inflight.reclaim_reservations(state, now)
    for held in gone:
        store.append_event(
            "ask.reclaimed", pid=held.pid, charged_usd=round(held.usd, 6), session=session
        )
    state, stale = inflight.reclaim(state, now)
    if stale is not None:
        store.append_event(
            "inflight.reclaimed",
            kind=stale.kind,
            pid=stale.pid,
            charged_usd=round(stale.reserved_usd, 6),
            session=session,
        )
    return state
