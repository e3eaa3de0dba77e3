"""The convergence rules of reviews: a finding is delivered verbatim at most twice (then it is
disputed and the implementer is told to answer it or ask), a task has at most so many
findings, and reviews that only restate what is standing pause the loop as not converging.

Pure: a review's decision, the state and the ledger in, the next ones out.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...contract import PREFIX, fix_reason
from ...guards import Decision, Step, allow
from ...hookio import Answer
from ...state import Finding, State
from . import findings
from .caps import end
from .findings import Entry, Ledger, Raised
from .record import evolve, of

if TYPE_CHECKING:
    from ...config import Config
    from ...manager.schemas import Review


@dataclass(frozen=True)
class Rules:
    # Times the same finding is delivered in the same words before it is disputed.
    max_verbatim: int = 2
    # Findings one task may collect before the loop pauses for the user.
    max_findings_per_task: int = 12
    # Reviews in a row that raise nothing new and close nothing before the loop pauses.
    not_converging: int = 3

    @classmethod
    def of(cls, config: Config) -> Rules:
        """The user's settings (config file or `AUTOPILOT_CODEX_REVIEW_*`)."""
        return cls(
            config.review_max_verbatim, config.review_max_findings, config.review_not_converging
        )


# A review whose every finding is disputed already has nothing to deliver: the Stop goes on to
# the verdict, which counts the turn like any other.
PASSED_DISPUTED = "review.disputed.passed"


def judge(
    state: State,
    decision: Decision,
    review: Review | None,
    ledger: Ledger,
    *,
    diff_key: str,
    now: str,
    rules: Rules,
    changed_files: Sequence[str] | None = None,
    can_end: bool = True,
) -> tuple[State, Decision, Ledger]:
    """The reducer's answer to a review, with the ledger's memory applied. A finding on a file
    the task's diff did not touch is advisory (waived): code that predates the task is not
    the task's to fix."""
    task = of(state).current_task or "wrap-up"
    if review is None or decision.event.endswith((".discarded", ".orphaned")):
        return state, decision, ledger
    if not decision.blocks and review.decision == "approve":
        return state, decision, findings.approved(ledger, task)
    merged = findings.merge(
        ledger,
        task=task,
        raised=[Raised.of(f) for f in review.findings],
        closed_ids=review.closed or [],
        diff_key=diff_key,
        now=now,
        max_verbatim=rules.max_verbatim,
    )
    ledger = merged.ledger
    if changed_files is not None:
        ledger = findings.waive_outside(ledger, [e.id for e in merged.new], changed_files)
        merged = dataclasses.replace(merged, said=[ledger.get(e.id) or e for e in merged.said])
    if not decision.blocks:
        return state, decision, ledger
    ended = stop_check(state, ledger, rules)
    if ended is not None:
        if not can_end:
            # A background review cannot tell the user: the next Stop pauses (`stop_check`).
            quiet = evolve(_with_reason(state, None), pending_review=None)
            return quiet, allow(f"{ended[1].event}.at_stop"), ledger
        return (*ended, ledger)
    deliver = [e for e in merged.said if e.status == "open"]
    if not review.findings:
        return state, decision, ledger  # a fix in words only: it stands as said
    rejected = decision.event == "review.reject"
    if not rejected and not deliver and not merged.disputed:
        # Every finding disputed already or advisory: nothing to fix. A reject stands
        # whatever its findings: it is about the approach, and its restore must be heard.
        return _with_reason(state, None), allow(PASSED_DISPUTED), ledger
    reason = _reason(review, decision, deliver, merged.disputed, rejected=rejected)
    ledger = findings.delivered(ledger, [e.id for e in deliver])
    event = decision.event if deliver or rejected else "review.disputed"
    answer = dataclasses.replace(decision, event=event, answer=Answer(block=reason))
    return _with_reason(state, reason), answer, ledger


_TAG = re.compile(r"\(finding (F\d+)\)")


def replay(
    state: State, decision: Decision, ledger: Ledger, rules: Rules
) -> tuple[State, Decision, Ledger]:
    """A cached review replayed on an unchanged diff delivers its findings again, in the same
    words: it counts toward the verbatim limit like the manager saying them again."""
    ids = set(_TAG.findall(decision.reason)) if decision.blocks else set()
    if not ids:
        return state, decision, ledger
    entries, disputed = [], []
    for e in ledger.entries:
        if e.id in ids and e.status == "open":
            e = dataclasses.replace(e, verbatim=e.verbatim + 1, deliveries=e.deliveries + 1)
            if e.verbatim > rules.max_verbatim:
                e = dataclasses.replace(e, status="disputed")
                disputed.append(e)
        entries.append(e)
    ledger = dataclasses.replace(ledger, entries=tuple(entries))
    if not disputed:
        return state, decision, ledger
    # Said often enough: once more as a dispute, then the same diff no longer blocks on it.
    reason = f"{PREFIX} Review: nothing new to fix.\n\n" + dispute_notice(disputed)
    answer = dataclasses.replace(decision, event="review.disputed", answer=Answer(block=reason))
    return _with_reason(state, None), answer, ledger


def stop_check(state: State, ledger: Ledger, rules: Rules) -> Step | None:
    """The pause the ledger calls for, if any: reviews not converging, or a task with more
    findings than allowed (both counted since the loop's last resume)."""
    task = of(state).current_task or "wrap-up"
    if ledger.idle_reviews >= rules.not_converging:
        return _paused(state, ledger, task, "not_converging", rules)
    if findings.raised_since_epoch(ledger, task) > rules.max_findings_per_task:
        return _paused(state, ledger, task, "too_many_findings", rules)
    return None


def at_stop(
    state: State, ledger: Ledger, config: Config, replayed: Step | None, head: str | None
) -> tuple[Step | None, tuple[State, Decision, Ledger] | None]:
    """What a Stop asks of the ledger by the user's rules (`Rules.of`), in one call: the pause
    (`stop_check`) and, given a cached review's replay, that replay (`replay`) counted as the
    Stop's turn if it blocks (`count_turn`)."""
    rules = Rules.of(config)
    paused = stop_check(state, ledger, rules)
    if replayed is None:
        return paused, None
    state, decision, ledger = replay(*replayed, ledger, rules)
    return paused, (count_turn(state, decision, True, head), decision, ledger)


def count_turn(state: State, decision: Decision, at_stop: bool, head: str | None) -> State:
    """A Stop answered by a review's block is a turn of the loop, exactly like a verdict's:
    the stall count, the iteration cap and (when the commit is known) no progress."""
    if not (at_stop and decision.blocks):
        return state
    state = state.evolve(idle_stop_blocks=state.idle_stop_blocks + 1, iteration=state.iteration + 1)
    if head is None:
        return state
    previous = of(state).last_verdict_head or state.base_sha
    streak = of(state).no_progress_streak + 1 if head == previous else 0
    return evolve(state, no_progress_streak=streak, last_verdict_head=head)


def _reason(
    review: Review,
    decision: Decision,
    deliver: Sequence[Entry],
    disputed: Sequence[Entry],
    *,
    rejected: bool,
) -> str:
    if rejected:
        text = decision.reason  # the restore instructions stand as written
    elif deliver:
        text = fix_reason(review.summary, [_finding(e) for e in deliver])
    else:
        text = f"{PREFIX} Review: nothing new to fix."
    if disputed:
        text += "\n\n" + dispute_notice(disputed)
    return text


def dispute_notice(disputed: Sequence[Entry]) -> str:
    names = ", ".join(f"{e.id} ({e.title})" for e in disputed)
    return (
        f"The manager repeated {names} in the same words after you were told twice; it is now "
        "marked disputed and will not be delivered again. If it is right, fix it; if not, say "
        "in your final message why it does not apply, or ask the user. Then move on."
    )


def _finding(entry: Entry) -> Finding:
    return Finding(
        severity=entry.severity,  # type: ignore[arg-type]  # checked by the schema
        file=entry.file,
        line_start=entry.line_start,
        line_end=entry.line_end,
        title=entry.title,
        recommendation=f"{entry.recommendation} (finding {entry.id})",
    )


def _with_reason(state: State, reason: str | None) -> State:
    """Keep the cached review and a waiting background review in step with what is
    delivered: a replay of the same diff says what the ledger let through, or nothing."""
    record = of(state).last_review
    if record is None:
        return state
    if reason is None:
        record = dataclasses.replace(record, decision="approve", reason="")
    else:
        record = dataclasses.replace(record, reason=reason)
    cache = [record if r.diff_hash == record.diff_hash else r for r in of(state).reviewed]
    pending = of(state).pending_review
    if pending is not None and pending.diff_hash == record.diff_hash:
        pending = record if reason is not None else None
    return evolve(state, last_review=record, reviewed=cache, pending_review=pending)


def _paused(state: State, ledger: Ledger, task: str, why: str, rules: Rules) -> Step:
    standing = "; ".join(findings.listing(ledger, task, limit=8)) or "none"
    if why == "not_converging":
        what = (
            f"reviews not converging: {ledger.idle_reviews} reviews in a row raised nothing new "
            f"and closed nothing, only restated: {standing}"
        )
    else:
        what = (
            f"too many review findings: task {task} collected more than "
            f"{rules.max_findings_per_task}; standing: {standing}"
        )
    state = evolve(_with_reason(state, None), pending_review=None)
    return end(state, "paused", what, f"review.{why}")
