"""The loop's finding ledger: every review finding with a stable id, its status, its task and
the diff state it was raised on, so a review can close, keep or restate what earlier reviews
said instead of answering afresh each time.

Pure: the ledger is a value, `merge` gives the next one; `findings_store` reads and writes it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...contract import clip

if TYPE_CHECKING:
    from .record import AutopilotRecord

Status = Literal["open", "fixed", "disputed", "waived"]
# Findings still standing: delivered to the implementer (open) or no longer (disputed).
STANDING: frozenset[str] = frozenset({"open", "disputed"})


@dataclass(frozen=True)
class Entry:
    id: str
    task: str
    status: Status
    severity: str
    file: str | None
    title: str
    recommendation: str
    # The diff state (the review cache's key) the finding was raised on, and when.
    raised_on: str
    raised_at: str
    # The ledger's review count when it was raised, and when it was last said: its age.
    raised_review: int
    seen_review: int
    # How many times in a row the manager said it in exactly these words.
    verbatim: int = 1
    deliveries: int = 0
    line_start: int | None = None
    line_end: int | None = None

    @property
    def text(self) -> str:
        return verbatim_text(self.severity, self.file, self.title, self.recommendation)


@dataclass(frozen=True)
class Ledger:
    entries: tuple[Entry, ...] = ()
    # Reviews merged so far, and how many of the last ones in a row changed nothing.
    reviews: int = 0
    idle_reviews: int = 0
    # The loop's generation the counts are of, and the review count when it began: a resume
    # starts the idle count and the per-task cap afresh, the findings stay.
    generation: int = 0
    epoch: int = 0

    def standing(self, task: str | None = None) -> list[Entry]:
        return [e for e in self.entries if e.status in STANDING and task in (None, e.task)]

    def get(self, finding_id: str) -> Entry | None:
        return next((e for e in self.entries if e.id == finding_id), None)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        data: dict[str, Any] = json.loads(text)
        names = {f.name for f in dataclasses.fields(Entry)}
        entries = tuple(
            Entry(**{k: v for k, v in raw.items() if k in names}) for raw in data.get("entries", [])
        )
        counts = [int(data.get(k, 0)) for k in ("reviews", "idle_reviews", "generation", "epoch")]
        return cls(entries, *counts)


@dataclass(frozen=True)
class Raised:
    """A finding as one review states it; `id` is the ledger id the manager gave, if any."""

    severity: str
    file: str | None
    title: str
    recommendation: str
    id: str | None = None
    line_start: int | None = None
    line_end: int | None = None

    @classmethod
    def of(cls, source: Any) -> Raised:
        return cls(
            severity=str(source.severity),
            file=source.file,
            title=str(source.title),
            recommendation=str(source.recommendation),
            id=getattr(source, "id", None),
            line_start=getattr(source, "line_start", None),
            line_end=getattr(source, "line_end", None),
        )


@dataclass(frozen=True)
class Merge:
    ledger: Ledger
    # This review's findings, by ledger entry, in the review's order.
    said: list[Entry] = field(default_factory=list)
    new: list[Entry] = field(default_factory=list)
    closed: list[Entry] = field(default_factory=list)
    # Said verbatim more often than allowed, disputed by this review.
    disputed: list[Entry] = field(default_factory=list)


def verbatim_text(severity: str, file: str | None, title: str, recommendation: str) -> str:
    return " ".join(f"{severity}|{file or ''}|{title}|{recommendation}".split()).lower()


def merge(
    ledger: Ledger,
    *,
    task: str,
    raised: Sequence[Raised],
    closed_ids: Sequence[str],
    diff_key: str,
    now: str,
    max_verbatim: int,
) -> Merge:
    """One review's answer into the ledger. A finding keeps its id when the manager names it
    or says it again in the same words; a standing finding of the task the review neither
    keeps nor closes was fixed by the newer diff it reviewed (superseded, never lost)."""
    number = ledger.reviews + 1
    by_id = {e.id: e for e in ledger.entries}
    standing = {e.id: e for e in ledger.standing(task)}
    by_text = {e.text: e.id for e in standing.values()}
    # Advisory findings (on code no task's diff touched) of any task: one said again is the
    # same finding, not a new one, so a review that only restates it changes nothing.
    advisory = {e.id: e for e in ledger.entries if e.status == "waived"}
    advisory_text = {e.text: e.id for e in advisory.values()}
    said: list[Entry] = []
    new: list[Entry] = []
    disputed: list[Entry] = []
    next_n = len(ledger.entries) + 1
    for r in raised:
        if r.id is not None and r.id in closed_ids:
            continue  # kept and closed at once: the manager's close wins
        text = verbatim_text(r.severity, r.file, r.title, r.recommendation)
        # A new finding said twice in one review is one finding: its text names it too.
        known = r.id if r.id in standing else by_text.get(text)
        again = r.id if r.id in advisory else advisory_text.get(text)
        if known is None and again is not None:
            if again in [s.id for s in said]:
                continue
            old = by_id[again]
            entry = dataclasses.replace(old, seen_review=number, verbatim=old.verbatim + 1)
        elif known is not None and known not in [s.id for s in said]:
            old = by_id[known]
            repeats = old.verbatim + 1 if old.text == text else 1
            entry = dataclasses.replace(
                old,
                severity=r.severity,
                file=r.file,
                title=r.title,
                recommendation=r.recommendation,
                line_start=r.line_start,
                line_end=r.line_end,
                seen_review=number,
                verbatim=repeats,
            )
            if entry.status == "open" and repeats > max_verbatim:
                entry = dataclasses.replace(entry, status="disputed")
                disputed.append(entry)
        elif known is None:
            entry = Entry(
                id=f"F{next_n}",
                task=task,
                status="open",
                severity=r.severity,
                file=r.file,
                title=clip(r.title, 300),
                recommendation=clip(r.recommendation, 1500),
                raised_on=diff_key,
                raised_at=now,
                raised_review=number,
                seen_review=number,
                line_start=r.line_start,
                line_end=r.line_end,
            )
            next_n += 1
            new.append(entry)
            by_text[text] = entry.id
        else:
            continue  # the same finding twice in one review
        by_id[entry.id] = entry
        said.append(entry)
    said_ids = {e.id for e in said}
    closed: list[Entry] = []
    for entry_id, old in standing.items():
        if entry_id in said_ids:
            continue
        # Named as closed, or no longer raised on the newer diff this review read: fixed
        # either way (a finding is superseded by a later review, never silently lost).
        done = dataclasses.replace(old, status="fixed", seen_review=number)
        by_id[entry_id] = done
        closed.append(done)
    entries = tuple(by_id[e.id] for e in ledger.entries) + tuple(new)
    changed = bool(new or closed)
    idle = 0 if changed or not said else ledger.idle_reviews + 1
    counts = dataclasses.replace(ledger, entries=entries, reviews=number, idle_reviews=idle)
    return Merge(counts, said, new, closed, disputed)


def delivered(ledger: Ledger, ids: Sequence[str]) -> Ledger:
    """Count a delivery to the implementer of each of `ids`."""
    wanted = set(ids)
    entries = tuple(
        dataclasses.replace(e, deliveries=e.deliveries + 1) if e.id in wanted else e
        for e in ledger.entries
    )
    return dataclasses.replace(ledger, entries=entries)


def approved(ledger: Ledger, task: str, *, number_up: bool = True) -> Ledger:
    """An approving review: the task's standing findings are fixed, the idle count resets."""
    number = ledger.reviews + (1 if number_up else 0)
    entries = tuple(
        dataclasses.replace(e, status="fixed", seen_review=number)
        if e.task == task and e.status == "open"
        else e
        for e in ledger.entries
    )
    return dataclasses.replace(ledger, entries=entries, reviews=number, idle_reviews=0)


def waive_outside(ledger: Ledger, ids: Sequence[str], changed: Sequence[str]) -> Ledger:
    """New findings `ids` on a file the task's diff did not change become advisory."""
    touched = set(changed)
    wanted = set(ids)
    entries = tuple(
        dataclasses.replace(e, status="waived")
        if e.id in wanted and e.file and e.file not in touched and e.status == "open"
        else e
        for e in ledger.entries
    )
    return dataclasses.replace(ledger, entries=entries)


def in_generation(ledger: Ledger, generation: int) -> Ledger:
    """The ledger as the loop's `generation` counts it (see `Ledger.generation`)."""
    if ledger.generation == generation:
        return ledger
    return dataclasses.replace(ledger, idle_reviews=0, generation=generation, epoch=ledger.reviews)


def raised_since_epoch(ledger: Ledger, task: str) -> int:
    return sum(1 for e in ledger.entries if e.task == task and e.raised_review > ledger.epoch)


def age(entry: Entry, ledger: Ledger) -> int:
    """Reviews since the finding was raised."""
    return max(0, ledger.reviews - entry.raised_review)


# Times an advisory finding is raised before the manager is told, once, that it is recorded.
ADVISORY_REPEATS = 3


def advisories(ledger: Ledger) -> list[Entry]:
    """The advisory findings the reviews raised more than once."""
    return [e for e in ledger.entries if e.status == "waived" and e.verbatim > 1]


def advisory_lines(ledger: Ledger, *, just_repeated: bool = False) -> list[str]:
    """One line each; `just_repeated`: only those raised for the `ADVISORY_REPEATS`th time by
    the last review (what the next review's prompt shows the manager, once)."""
    lines = []
    for e in advisories(ledger):
        if just_repeated and (e.verbatim != ADVISORY_REPEATS or e.seen_review != ledger.reviews):
            continue
        # Advisory means on a named file no diff touched (`waive_outside`).
        lines.append(f"{e.id} [advisory, {e.severity}, raised {e.verbatim}x] {e.title} ({e.file})")
    return lines


def standing_lines(ledger: Ledger, task: str, limit: int = 20) -> tuple[list[str], list[str]]:
    """What a prompt shows of the ledger: the task's standing findings (`listing`) and the
    advisory ones just raised for the `ADVISORY_REPEATS`th time (`advisory_lines`)."""
    return listing(ledger, task, limit), advisory_lines(ledger, just_repeated=True)


ADVISORY_VERDICT = (
    "Advisory (code no task touched; recorded, not delivered, not a reason to continue):"
)


def with_standing(ledger: Ledger, own: AutopilotRecord) -> str:
    """The verdict's view of the loop's last review, with the task's findings still standing
    (a disputed one is the implementer's to answer in its message, and the verdict's to
    weigh), and, once, the advisory findings the reviews keep raising: not a reason to go on."""
    last_review = own.last_review.summary if own.last_review is not None else ""
    lines, repeated = standing_lines(ledger, own.current_task or "wrap-up", limit=10)
    if repeated:
        lines += [ADVISORY_VERDICT, *repeated]
    if not lines:
        return last_review
    return (last_review + "\nStanding review findings:\n" + "\n".join(lines)).strip()


def listing(ledger: Ledger, task: str | None = None, limit: int = 20) -> list[str]:
    """The standing findings, one line each, for `status`, `next` and the prompts."""
    lines = []
    for e in ledger.standing(task)[:limit]:
        where = f" ({e.file})" if e.file else ""
        said = f", said {e.verbatim}x verbatim" if e.verbatim > 1 else ""
        lines.append(
            f"{e.id} [{e.status}, {e.severity}, task {e.task}, age {age(e, ledger)} "
            f"review(s){said}] {e.title}{where}"
        )
    return lines
