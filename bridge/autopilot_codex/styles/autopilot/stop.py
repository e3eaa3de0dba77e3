"""The autopilot Stop, load → decide → commit, in as few lock holds as its calls allow
(docs/architecture.md numbers its path).

1. `take_slot` (hold 1, the state loaded once): the guards, then `review`: the finding
   ledger's pause, a waiting fix or the cached review of the final diff. A Stop decided there
   ends the hold (`finish`). Else the slot is taken, and without checks `prepare_verdict`
   reserves the verdict's call in this hold too.
2. `after_checks`: the user's checks WITHOUT the lock, then hold 2 prepares the verdict.
3. `call`: the manager's call without the lock; the last hold loads the state once and applies
   the answer if the loop is still the one it was asked about.

The lock is never held across a manager call or the checks, so a typed `stop` never waits.
What the Stop touches beyond its state comes through one `Effects` value (a test hands it a
fake clock); each hold is one call of it (`Effects.hold`), which writes what the steps leave in
the `Hold` as the lock is let go. The style's hook table hands the Stop here (`answer_stop`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ... import guards
from ...checks.records import CheckResult
from ...config import for_loop
from ...guards import Decision
from ...state import State
from ..context import HookContext
from . import caps, convergence, findings, findings_store, idle, inflight, reducer
from .effects import MOVED, Effects, Facts, Hold, Seen
from .fold import REVIEW_PASSED, apply_folded
from .record import of, position_of, review_mode, task_of

if TYPE_CHECKING:
    from ...config import Config
    from ...hookio import Answer
    from ...manager import Outcome
    from ...manager.prompts import Prompt

# How often a Stop looks again while a background review of its diff is out.
STOP_POLL_S = 0.05
# `review` found the final diff unreviewed: the verdict's call reviews it too.
FOLDED = "review.folded"


def answer_stop(ctx: HookContext) -> Answer:
    return on_stop(ctx).answer


def on_stop(ctx: HookContext, fx: Effects | None = None) -> Decision:
    try:
        # Hold 1, the door built as it is taken: guards, the slot, a waiting fix or the
        # cached review, and (without checks) the verdict's call prepared.
        fx, step = take_slot(ctx, fx)
        if isinstance(step, Checks):
            # The user's checks without the lock, then hold 2 prepares the verdict.
            step = after_checks(ctx, fx, fx.token, step)
        # The call without the lock; the last hold applies its answer.
        return call(ctx, fx, step, fx.token)
    except BaseException:
        # Every hold that decides releases the slot; one cut short must not keep it. (A
        # first hold cut short wrote nothing, so a Stop whose door was not built yet holds
        # no slot.)
        if fx is not None:
            with fx.hold(ctx, owner=False) as held:
                if held.state is not None and inflight.holds(held.state, fx.token):
                    held.save = inflight.release(held.state, fx.token)
        raise


# -- 1. guards, the slot and the review: the first hold ------------------------------------


def take_slot(ctx: HookContext, fx: Effects | None) -> tuple[Effects, Decision | Checks | Pending]:
    """Guard the Stop, then take the in-flight slot for its calls and go on in the same hold;
    the door, built by the first hold unless given, comes back with the step.

    A background review of the diff being judged is waited for; one of an older diff is
    superseded (the Stop reviews the final diff itself); another Stop that holds the slot is
    already judging this turn, so this one answers without a call."""
    give_up: float | None = None
    digest: str | None = None
    while True:
        # The owner's loop, claimed, charged and its dead callers' slots reclaimed.
        with Effects.opened(ctx, fx, claim=True) as (fx, held):
            state, now, token = held.state, held.now, fx.token
            if state is None:
                return fx, guards.allow("ignored")
            if give_up is None:
                give_up = now + ctx.config.timeout_s + inflight.SLACK_S
            slot = state.inflight
            if (
                slot is not None
                and slot.kind == "review"
                and review_mode(state, fx.environ) == "edit"
            ):
                digest = digest if digest is not None else fx.facts(of(state).task_base_sha).key
                state = superseded(ctx, held, state, digest)
                slot = state.inflight
            if slot is not None and (slot.kind == "stop" or now > give_up):
                # Busy: another Stop's answer is the turn's; this one lets the host go on
                # without a call (seed: one verdict call per iteration, never more).
                state = state.evolve(stop_events=state.stop_events + 1)
                return fx, finish(held, state, guards.allow("stop.busy"))
            if slot is None:
                return fx, review(ctx, fx, held, state, token)
            held.save = state
        fx.sleep(STOP_POLL_S)


def superseded(ctx: HookContext, held: Hold, state: State, digest: str) -> State:
    slot = state.inflight
    if slot is None or not slot.digest or slot.digest == digest:
        return state
    state, old = inflight.supersede(state)
    if old is not None:
        charged = round(old.reserved_usd, 6)
        line: dict[str, object] = {"pid": old.pid, "charged_usd": charged}
        held.lines.append(("review.superseded", {**line, "session": ctx.payload.session_id}))
    return state


def waiting(tasks: tuple[str, ...]) -> Decision:
    """The host says the session waits for background work to wake it: the turn is not over,
    so nothing is judged (no call, no block) until a Stop with nothing left in flight."""
    from ..waiting import line

    return guards.allow("stop.background", line(tasks, "the manager judges the turn"))


def review(
    ctx: HookContext, fx: Effects, held: Hold, state: State, token: str
) -> Decision | Checks | Pending:
    """The guards (`caps.stop_guard`), then the review without a call, in this order: the
    finding ledger's pause (reviews that go nowhere, issue 23), the host's background work, a
    waiting fix, the final diff's cached review (unless reviews are off or per commit). One
    that ends the turn is the answer; else the Stop takes the slot for the verdict, whose
    call reviews the diff too when no review of it is cached (`fold`)."""
    state, guarded = caps.stop_guard(
        state, stop_hook_active=ctx.payload.stop_hook_active, limits=held.limits, now=held.now
    )
    if guarded is not None:
        return finish(held, state, guarded)
    background = ctx.payload.background
    at_stop = review_mode(state, fx.environ) in ("stop", "edit")
    # git's facts (none while the host waits for background work: nothing is judged then)
    # and the finding ledger, in one look.
    facts, ledger = fx.judging(state, git=not background)
    delivered = replayed = None
    if facts is not None:
        cached = of(state).cached_review(facts.key) if at_stop and not facts.empty else None
        delivered, replayed = reducer.at_stop(state, cached, facts.head)
    # The ledger's rules in one call: the pause, and the replay counted.
    paused, turn = convergence.at_stop(
        state, ledger, ctx.config, replayed, facts.head if facts else None
    )
    if paused is not None:
        return finish(held, *paused)
    if facts is None:
        return finish(held, state, waiting(background))
    if delivered is not None:
        return finish(held, *delivered)
    reviewed, fold = guards.allow("ignored"), False
    if at_stop:
        if facts.empty:
            reviewed = guards.allow("review.empty")
        elif turn is None:
            reviewed, fold = guards.allow(FOLDED), True
        else:
            # The finding ledger's count of the replay, then the Stop's turn if it blocks.
            state, reviewed, after = turn
            held.ledger = after if after != ledger else None
            if reviewed.blocks or reviewed.event not in REVIEW_PASSED:
                return finish(held, state, reviewed)
            # The review's line; the hold's one save seals it with what follows.
            held.decided.append((state, reviewed, None))
    if state.checks:
        state = slot(ctx, fx, held, state, token)
        held.save = state
        return Checks(state, reviewed, fold)
    return prepare_verdict(ctx, fx, held, state, token, facts, fold=fold, ledger=ledger)


def slot(
    ctx: HookContext, fx: Effects, held: Hold, state: State, token: str, usd: float = 0.0
) -> State:
    """The loop's one in-flight slot taken for this Stop's calls (with their worst case):
    free in this same hold (`take_slot` saw it so), so taking it cannot fail."""
    taken = inflight.take(
        state,
        "stop",
        pid=fx.pid,
        token=token,
        now=held.now,
        timeout_s=ctx.config.timeout_s,
        reserved_usd=usd,
    )
    assert taken is not None
    return taken


# -- 2. checks: without the lock, then the second hold --------------------------------------


@dataclass(frozen=True)
class Checks:
    """The slot is held and the loop has checks: they run without the lock."""

    state: State
    # The answer when the loop changed hands while the checks ran.
    otherwise: Decision
    fold: bool


def after_checks(ctx: HookContext, fx: Effects, token: str, step: Checks) -> Decision | Pending:
    results = run_checks(ctx, fx, step.state)
    with fx.hold(ctx) as held:
        state = held.state
        if state is None or not inflight.holds(state, token):
            return step.otherwise
        state = state.evolve(last_checks=results)
        return prepare_verdict(ctx, fx, held, state, token, None, fold=step.fold)


def run_checks(ctx: HookContext, fx: Effects, state: State) -> list[CheckResult]:
    """Each fresh run is written to the ledger; the caller keeps the results in the state."""
    from ...checks.evidence import gather

    # One call is left after the checks: the verdict, with the final diff's review folded in.
    timeout = for_loop(state, fx.environ, ctx.config).timeout_s
    return gather(fx.store, state, manager_calls=1, call_timeout_s=timeout)[1]


# -- 3. the verdict, its call and its answer applied: the last hold ---------------------


def prepare_verdict(
    ctx: HookContext,
    fx: Effects,
    held: Hold,
    state: State,
    token: str,
    facts: Facts | None,
    *,
    fold: bool,
    ledger: findings.Ledger | None = None,
) -> Decision | Pending:
    """The verdict's call; with `fold`, the review of the final diff in the same call. The
    facts and the ledger the first hold read serve it unless checks ran (they may change
    the tree; the first hold wrote the ledger)."""
    from ...manager import prompts

    checks_text = checks_red = ""
    if state.checks:
        # At every verdict Stop: whether the manager would end the loop or advance is known
        # only after it; an unchanged tree reruns nothing.
        from ...checks.run import evidence_text, failure_reason

        results = run_checks(ctx, fx, state)
        state = state.evolve(last_checks=results)
        checks_text, checks_red = evidence_text(results), failure_reason(results)
    # The loop's plan, the facts and the ledger (read again after checks), ...
    seen = fx.seen(ctx, state, facts, ledger)
    state, facts = seen.state, seen.facts
    head, diff, key = facts.head, facts.diff, facts.key
    # Reviewed meanwhile (only a hook without the slot could have): the verdict alone.
    fold = fold and not facts.empty and of(state).cached_review(key) is None
    prompt = prompts.verdict_prompt(
        state.goal,
        state.plan,
        task_of(state),
        position_of(state),
        completed=of(state).completed_tasks,
        commits=seen.commits,
        diff=diff.text,
        last_message=ctx.payload.last_assistant_message,
        last_review=findings.with_standing(seen.ledger, of(state)),
        cap=ctx.config.prompt_chars,
        checks=checks_text,
        ledger=findings_store.findings_prompt(ctx, state, diff.files) if fold else None,
        lost=seen.lost,
    )
    limits, last_checks, unseen = held.limits, state.last_checks, seen.unseen
    looked = seen.looked

    def reduce(s: State, outcome: Outcome[Any], last: Hold) -> guards.Step:
        s = s.evolve(last_checks=last_checks)
        # A red check, what HEAD holds that the reviewed tree does not, or a tree changed
        # since the look, overrules a done.
        moved = "" if last.tree in looked else MOVED
        red = {"checks_red": checks_red, "unseen": "\n\n".join(filter(None, [unseen, moved]))}
        if not fold:
            return reducer.apply_verdict(s, outcome, head, limits, now=last.at, **red)
        files, decided = diff.files, last.decided
        return apply_folded(
            ctx, s, outcome, key, files, head, limits, now=last.at, **red, decided=decided
        )

    if not fold:
        return reserve(ctx, fx, held, seen, state, "Verdict", prompt, reduce, token)
    if facts.tamper:
        # Settings in the git directory that run programs or hide changes: once per review.
        tamper: dict[str, object] = {
            "findings": list(facts.tamper),
            "session": ctx.payload.session_id,
        }
        held.lines.append(("git_tamper", tamper))
    return reserve(ctx, fx, held, seen, state, "Judgement", prompt, reduce, token)


@dataclass(frozen=True)
class Pending:
    """A manager call prepared under the lock, to be made after the lock is released."""

    state: State
    # "Verdict" or "Judgement": the pydantic schema is imported only when the call is made.
    schema: str
    prompt: Prompt
    # The settings the call is made with (`effects.Seen.settings`).
    settings: Config
    # The answer applied in the last hold (the records' time is that hold's), and how that
    # hold looks at the tree again first.
    reduce: Callable[[State, Outcome[Any], Hold], guards.Step]
    look: Callable[[], str] | None
    event: str


def reserve(
    ctx: HookContext,
    fx: Effects,
    held: Hold,
    seen: Seen,
    state: State,
    schema: str,
    prompt: Prompt,
    reduce: Callable[[State, Outcome[Any], Hold], guards.Step],
    token: str,
) -> Decision | Pending:
    """Refuse a call the budget cannot cover; otherwise reserve its worst case and save."""
    kind = "verdict" if schema == "Verdict" else "review"
    worst, blocked = caps.priced(ctx, state, prompt, f"{kind}.budget", now=held.now)
    if blocked is not None:
        return finish(held, *blocked, token=token)
    if state.checks:  # the slot, taken before the checks, given the call's worst case
        held.save = inflight.reserve(state, token, worst)
    else:  # the slot taken now, with the call's worst case on it
        held.save = slot(ctx, fx, held, state, token, worst)
    return Pending(held.save, schema, prompt, seen.settings, reduce, seen.look, kind)


def call(ctx: HookContext, fx: Effects, step: Decision | Pending, token: str) -> Decision:
    """Make the prepared call without the lock, then apply it if the loop is still the same."""
    if isinstance(step, Decision):
        return step
    from ...manager import schemas

    manager = fx.manager(of(step.state).model, step.settings)
    schema = schemas.Judgement if step.schema == "Judgement" else schemas.Verdict
    outcome: Outcome[Any] = manager.ask(schema, step.prompt.instructions, step.prompt.text)
    outcome, breach = idle.ask(manager, schema, step.state, step.prompt, outcome)
    # Whatever is on disk, with its plan: a loop stopped or re-planned meanwhile is seen so.
    with fx.hold(ctx, owner=False, plan=True, look=step.look) as held:
        if held.state is None:
            return guards.allow(f"{step.event}.orphaned")
        # Load → decide → commit: the answer applied in one call of the reducer, then every
        # line it decided and the one save that seals them, written as the hold ends.
        decided = reducer.answered(
            held.state,
            step.state,
            outcome,
            lambda state: step.reduce(state, outcome, held),
            token=token,
            event=step.event,
            breach=breach,
            now=held.now,
        )
        held.decided.extend(decided)
        held.save = decided[-1][0]
        return decided[-1][1]


def finish(
    held: Hold,
    state: State,
    decision: Decision,
    outcome: Outcome[Any] | None = None,
    *,
    token: str = "",
) -> Decision:
    """What every hold that decides ends with: the decision's event line, then its state saved
    (this Stop's slot released, given its token), both written by the door as the hold ends,
    so the save seals the line in the hold's one witness write."""
    state = inflight.release(state, token) if token else state
    held.decided.append((state, decision, outcome))
    held.save = state
    return decision
