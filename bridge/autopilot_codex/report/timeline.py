"""The loop's story as entries in time order: the ledger's events and the rollout's rounds."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from ..loopfiles import LoopFiles, items, number, strings, text
from ..spend import charged

# The kind of an entry is its colour and its filter on the page.
KINDS = {
    "plan": "plan",
    "review": "review",
    "verdict": "verdict",
    "checks": "check",
    "ask": "ask",
    "rounds": "round",
    "ralph": "verdict",
    "resume": "resume",
    "caps": "resume",
    "claim": "resume",
    "stop": "pause",
    "cancel": "pause",
    "question": "question",
    "session": "pause",
    "watch": "pause",
}
FAILED = ("fail", "error", "timeout", "reject", "abort", "refused", "failed")


@dataclass(frozen=True)
class Finding:
    severity: str
    where: str
    title: str
    recommendation: str


@dataclass(frozen=True)
class Entry:
    at: str
    kind: str
    title: str
    detail: str = ""
    # True green, False red, None neither.
    ok: bool | None = None
    cost_usd: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    tail: str = ""
    # Orders entries of the same second: a start before the work, an end after it.
    rank: int = 1


def build(files: LoopFiles) -> list[Entry]:
    reviews = _ReviewIndex(items(files.state, "reviewed"))
    tails = {text(c, "command"): c for c in items(files.state, "last_checks")}
    entries = [_entry(event, reviews, tails) for event in files.events]
    for record in files.rounds():
        entries.append(_round(record))
        if (said := _manager(record)) is not None:
            entries.append(said)
    return sorted(entries, key=lambda e: (e.at, e.rank))


def _kind(event: str, record: dict[str, Any]) -> str:
    paused = "paused" in (text(record, "status"), text(record, "decision"))
    if paused or event.endswith((".stalled", ".unavailable")):
        return "pause"
    return KINDS.get(event.split(".", 1)[0], "other")


def _ok(event: str, record: dict[str, Any]) -> bool | None:
    words = {event.rsplit(".", 1)[-1], text(record, "decision"), text(record, "status")}
    if words & set(FAILED) or event in ("checks.overrule", "checks.tamper", "work.lost"):
        return False
    if words & {"pass", "approve", "done", "answered"}:
        return True
    return None


def _entry(record: dict[str, Any], reviews: _ReviewIndex, tails: dict[str, Any]) -> Entry:
    event = text(record, "event", "event")
    at = text(record, "ts")
    kind = _kind(event, record)
    title = event
    detail = text(record, "reason") or text(record, "line") or text(record, "error")
    findings: list[Finding] = []
    tail = ""
    if event.startswith("review."):
        if (found := reviews.take(event.split(".", 1)[1], at)) is not None:
            detail = text(found, "summary") or detail
            findings = [_finding(f) for f in items(found, "findings")]
    elif event == "checks.run":
        title = f"check {text(record, 'status')}: {text(record, 'command')}"
        tail = text(record, "tail")
        last = tails.get(text(record, "command"))
        if not tail and last is not None and text(last, "started_at") <= at:
            tail = text(last, "tail")  # a ledger written before each run kept its own
    elif (named := _named(event, record)) is not None:
        title, detail = named[0], named[1] or detail
    decision = text(record, "decision")
    if plain := _plain(event, detail):
        title = plain
    elif decision and kind != "check" and decision not in title:
        title = f"{title}: {decision}"
    return Entry(
        at=at,
        kind=kind,
        title=title,
        detail=detail,
        ok=_ok(event, record),
        cost_usd=charged(record),
        findings=findings,
        tail=tail,
        rank=0 if event.endswith(".start") else (2 if event.endswith(".end") else 1),
    )


def _named(event: str, record: dict[str, Any]) -> tuple[str, str] | None:
    """The title (and a detail, or "") of an event whose own name says little."""
    if event == "ask":
        return f"question {text(record, 'decision') or 'asked'} (task {text(record, 'task')})", ""
    if event in ("question.answered", "question.to_user"):
        return _question(event, record)
    if event == "session.ended":
        title = f"session ended ({text(record, 'reason')}) while the loop ran, without a Stop"
        return title, f"session {text(record, 'session')}"
    if event == "watch.silent":
        return f"watch: silent ({text(record, 'kind')})", ""
    if event == "plan":
        tasks = int(number(record, "tasks"))
        return f"planned {tasks} {'task' if tasks == 1 else 'tasks'}", ""
    if event == "work.lost":
        # Noticed by the shadow history: `autopilot-codex restore N` brings it back.
        title = f"work lost, kept in snapshot {int(number(record, 'snapshot'))}"
        return title, "; ".join(str(x) for x in record.get("lost") or [])
    return None


# Whose word an event is, in the reader's words: "verdict.continue" is the manager's.
SPEAKERS = {"verdict": "manager", "review": "review", "ralph": "ralph", "caps": "cap"}


def _plain(event: str, detail: str) -> str:
    """ "manager: continue — T1 accepted" for `verdict.continue`; "" for an event that has no
    plainer name (its own name and decision are shown)."""
    head, _, word = event.partition(".")
    speaker = SPEAKERS.get(head)
    if speaker is None or not word:
        return ""
    accepted = re.findall(r"Task (\S+) accepted", detail)
    said = f"{speaker}: {word.replace('_', ' ')}"
    return said + (f" — {', '.join(accepted)} accepted" if accepted else "")


def _question(event: str, record: dict[str, Any]) -> tuple[str, str]:
    """The implementer's question to the user and who answered it: the manager, or nobody
    yet (left to the user, the loop paused)."""
    task = text(record, "task")
    where = f" (task {task})" if task else ""
    question = text(record, "question")
    if event == "question.answered":
        return f"question answered by the manager{where}", f"{question}\n→ {text(record, 'answer')}"
    return f"question left to the user{where}", f"{question}\nwhy: {text(record, 'reason')}"


def _round(record: dict[str, Any]) -> Entry:
    role = text(record, "role", "round")
    number_ = int(number(record, "round"))
    outcome = text(record, "outcome")
    changed = strings(record, "files_changed")
    lines = [text(record, "message")]
    if outcome != "ok":
        # Why it failed, in the driver's words, or at least how the process ended.
        code = record.get("exit_code")
        lines.insert(0, "cause: " + (text(record, "detail") or f"{outcome}, exit code {code}"))
    if changed:
        lines.append("changed: " + ", ".join(changed[:20]))
    if markers := strings(record, "markers"):
        lines.append("markers: " + " ".join(markers))
    checks = strings(record, "checks")
    passed = record.get("checks_passed")
    if commit := text(record, "commit"):
        lines.append(f"commit {commit[:12]}")
    return Entry(
        at=iso(number(record, "end") or number(record, "start")),
        kind="round",
        title=f"round {number_} ({role}, attempt {int(number(record, 'attempt', 1))}): "
        f"{outcome} → {text(record, 'next')}",
        detail="\n".join(line for line in lines if line),
        ok=(passed if isinstance(passed, bool) else (None if outcome == "ok" else False)),
        cost_usd=number(record, "cost_usd"),
        tail="\n".join(checks),
    )


def _manager(record: dict[str, Any]) -> Entry | None:
    """The driver's manager calls after a round, apart from the round's own spend: their word
    on the whole diff and what they cost (`manager_usd`); None when it was not asked."""
    cost = number(record, "manager_usd")
    done = record.get("manager_done")
    if not cost and not isinstance(done, bool):
        return None
    word = "no word" if not isinstance(done, bool) else ("done" if done else "not done")
    return Entry(
        at=iso(number(record, "end") or number(record, "start")),
        kind="verdict",
        title=f"manager on round {int(number(record, 'round'))}: {word}",
        ok=done if isinstance(done, bool) else None,
        cost_usd=cost,
        rank=2,  # after the round it judged
    )


def _finding(data: dict[str, Any]) -> Finding:
    where = text(data, "file")
    start = data.get("line_start")
    if where and isinstance(start, int):
        where = f"{where}:{start}"
    return Finding(
        severity=text(data, "severity"),
        where=where,
        title=text(data, "title"),
        recommendation=text(data, "recommendation"),
    )


class _ReviewIndex:
    """The reviews in the state, matched to their ledger lines by decision and time: the
    ledger holds only the clipped block text, the state the findings."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.left = sorted(records, key=lambda r: text(r, "at"))

    def take(self, decision: str, at: str) -> dict[str, Any] | None:
        found = (r for r in reversed(self.left) if text(r, "decision") == decision)
        match = next((r for r in found if text(r, "at") <= at), None)
        if match is not None:
            self.left.remove(match)
        return match


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch))


def accepted_tasks(entries: list[Entry]) -> list[tuple[str, str]]:
    """(time, task id) for each "Task T1 accepted" the ledger tells of, in order."""
    return [(e.at, task) for e in entries for task in re.findall(r"Task (\S+) accepted", e.detail)]
