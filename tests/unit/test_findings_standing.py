"""What the verdict's prompt shows of the loop's last review and its finding ledger
(`findings.with_standing`): the summary, the task's standing findings, and once the advisory
ones the reviews keep raising."""

from __future__ import annotations

import json

from autopilot_codex.state import ReviewRecord
from autopilot_codex.styles.autopilot.findings import (
    ADVISORY_REPEATS,
    ADVISORY_VERDICT,
    Entry,
    Ledger,
    with_standing,
)
from autopilot_codex.styles.autopilot.record import AutopilotRecord


def entry(fid: str, task: str, **update: object) -> Entry:
    fields: dict[str, object] = {
        "id": fid, "task": task, "status": "open", "severity": "high", "file": "a.py",
        "title": f"title {fid}", "recommendation": "r", "raised_on": "d", "raised_at": "t",
        "raised_review": 1, "seen_review": 2,
    }  # fmt: skip
    return Entry(**{**fields, **update})  # type: ignore[arg-type]


def own(task: str | None = "T1", summary: str | None = "the summary") -> AutopilotRecord:
    review = ReviewRecord("d", "fix", summary) if summary is not None else None
    return AutopilotRecord(model="m", current_task=task, task_base_sha="b", last_review=review)


def test_nothing_reviewed_and_nothing_standing_is_no_text() -> None:
    assert with_standing(Ledger(), own(summary=None)) == ""
    assert with_standing(Ledger(), own()) == "the summary"


def test_the_task_s_standing_findings_follow_the_summary() -> None:
    ledger = Ledger((entry("F1", "T1"), entry("F2", "T2")), reviews=2)
    text = with_standing(ledger, own())
    head, _, rest = text.partition("\nStanding review findings:\n")
    assert head == "the summary"
    assert "F1 [open, high, task T1" in rest and "F2" not in rest
    # Past the last task the wrap-up's findings stand, not the last task's.
    assert with_standing(ledger, own(task=None)) == "the summary"
    wrap = Ledger((entry("F3", "wrap-up"),), reviews=2)
    assert "F3" in with_standing(wrap, own(task=None, summary=None))


def test_an_advisory_raised_again_and_again_is_named_once_as_no_reason_to_go_on() -> None:
    advisory = entry(
        "F9", "T1", status="waived", verbatim=ADVISORY_REPEATS, seen_review=4, file="b.py"
    )
    text = with_standing(Ledger((advisory,), reviews=4), own(summary=None))
    assert text.splitlines()[:2] == ["Standing review findings:", ADVISORY_VERDICT]
    assert "F9 [advisory" in text
    # Said once: a later review that did not raise it again shows nothing of it.
    assert with_standing(Ledger((advisory,), reviews=5), own(summary=None)) == ""


def test_the_ledger_is_written_with_its_keys_sorted() -> None:
    text = Ledger((entry("F1", "T1"),), reviews=2).to_json()
    data = json.loads(text)
    assert list(data) == sorted(data) and list(data["entries"][0]) == sorted(data["entries"][0])
