"""Reviews that converge, through the real hooks and the fake manager: a manager that repeats
one finding the implementer cannot satisfy must not keep a loop running (issue 23)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import (
    Hook,
    edit_payload,
    payload,
    plan_body,
    review_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import review_requests, verdict_requests


def start(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--review", mode, "--session-id", "sess-1", "goal"]) == 0
    capsys.readouterr()


def busy_turns(repo: Path, hook: Hook, turns: int) -> list[dict[str, Any]]:
    """An implementer that works at every turn (a new diff, a tool run) and never satisfies
    the manager: the stall guard is reset each turn and no verdict is ever asked for."""
    answers = []
    for turn in range(turns):
        (repo / "file1.txt").write_text(f"attempt {turn}\n")
        hook("PostToolUse", edit_payload(repo))
        answers.append(hook("Stop", payload("Stop", repo, stop_hook_active=turn > 0)).json)
        if state_of(repo)["status"] != "running":
            break
    return answers


def test_a_manager_repeating_one_unsatisfiable_finding_ends_the_loop(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    manager.enqueue(*[review_body("fix") for _ in range(40)], schema="Review")
    answers = busy_turns(repo, hook, 20)
    state = state_of(repo)
    assert state["status"] != "running", f"still running after {len(answers)} reviews"
    reviews = len(review_requests(manager))
    # The first repeat is the second review; within 6 manager calls after it the loop stops.
    assert reviews <= 1 + 6
    delivered = [a for a in answers if "Fix: write the right content" in a.get("reason", "")]
    assert len(delivered) <= 2
    # Without a commit, every blocked turn counts toward no progress, like a verdict's block.
    assert state["status"] == "aborted", state["stop_reason"]
    assert "without a new commit" in state["stop_reason"]
    assert state["iteration"] >= 3


def committing_turns(repo: Path, hook: Hook, turns: int, first: int = 0) -> list[dict[str, Any]]:
    """Like `busy_turns`, but the implementer commits every attempt: progress by the commit
    count, so only the convergence rules can see that the reviews go nowhere."""
    from tests.conftest import git

    answers = []
    for turn in range(first, first + turns):
        (repo / "file1.txt").write_text(f"attempt {turn}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"attempt {turn}")
        hook("PostToolUse", edit_payload(repo))
        answers.append(hook("Stop", payload("Stop", repo, stop_hook_active=turn > 0)).json)
        if state_of(repo)["status"] != "running":
            break
    return answers


def ledger_of(repo: Path) -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads((project_dir(repo) / "findings.json").read_text()))


def status_text(repo: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["-C", str(repo), "status"]) == 0
    return capsys.readouterr().out


def test_a_repeated_finding_is_disputed_and_the_loop_pauses_as_not_converging(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    manager.enqueue(*[review_body("fix") for _ in range(40)], schema="Review")
    answers = committing_turns(repo, hook, 20)
    state = state_of(repo)
    assert state["status"] == "paused"
    assert state["stop_reason"].startswith("reviews not converging")
    assert "F1" in state["stop_reason"]
    assert len(review_requests(manager)) <= 1 + 6
    delivered = [a for a in answers if "Fix: write the right content" in a.get("reason", "")]
    assert len(delivered) == 2
    # The third time the implementer hears that the finding is disputed, not the finding.
    assert any("marked disputed" in a.get("reason", "") for a in answers)
    entry = ledger_of(repo)["entries"][0]
    assert (entry["id"], entry["status"], entry["verbatim"]) == ("F1", "disputed", 4)
    shown = status_text(repo, capsys)
    assert "Open review findings" in shown and "F1 [disputed" in shown
    assert "said 4x verbatim" in shown
    capsys.readouterr()
    assert main(["-C", str(repo), "next"]) == 0
    shown_next = capsys.readouterr().out
    assert "Open review findings (task T1):" in shown_next and "F1 [disputed" in shown_next
    assert "age 3 review(s)" in shown_next
    # Every blocked Stop was a turn for the iteration cap.
    assert state["iteration"] == len(delivered) + 1


def finding(title: str, fid: str | None = None, file: str = "file1.txt") -> dict[str, Any]:
    return {
        "severity": "high",
        "file": file,
        "line_start": 1,
        "line_end": 1,
        "title": title,
        "recommendation": f"fix {title}",
        "id": fid,
    }


def test_a_closed_finding_is_gone_from_the_next_prompt_and_a_restated_one_keeps_its_id(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    manager.enqueue(
        review_body("fix", findings=[finding("first problem")], closed=None),
        review_body("fix", findings=[finding("first problem, said anew", "F1")], closed=[]),
        review_body("fix", findings=[finding("second problem")], closed=["F1"]),
        review_body("fix", findings=[finding("second problem", "F2")], closed=[]),
        schema="Review",
    )
    committing_turns(repo, hook, 4)
    prompts = [r.prompt_text for r in review_requests(manager)]
    assert "Open findings from earlier reviews of this task: none." in prompts[0]
    assert "F1 [open" in prompts[1] and "first problem" in prompts[1]
    assert "F1 [open" in prompts[2] and "said anew" in prompts[2]
    assert "F1" not in prompts[3] and "F2 [open" in prompts[3]
    entries = {e["id"]: e for e in ledger_of(repo)["entries"]}
    assert set(entries) == {"F1", "F2"}
    assert entries["F1"]["status"] == "fixed" and entries["F2"]["status"] == "open"


def test_a_finding_on_a_file_the_task_did_not_touch_is_advisory(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    manager.enqueue(
        review_body("fix", findings=[finding("old code smells", file="README.md")]),
        schema="Review",
    )
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    answers = committing_turns(repo, hook, 1)
    # Nothing blocking is left: the Stop goes on to the verdict.
    assert "old code smells" not in answers[0].get("reason", "")
    assert len(verdict_requests(manager)) == 1
    assert ledger_of(repo)["entries"][0]["status"] == "waived"


def test_a_forged_ledger_cannot_silence_a_finding(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    """The implementer rewrites findings.json to call the manager's finding disputed: the
    bridge sets the file aside and the finding is delivered again."""
    start(repo, manager, capsys, "stop")
    manager.enqueue(*[review_body("fix") for _ in range(2)], schema="Review")
    committing_turns(repo, hook, 1)
    path = project_dir(repo) / "findings.json"
    forged = json.loads(path.read_text())
    forged["entries"][0].update(status="disputed", verbatim=9)
    path.write_text(json.dumps(forged))
    answers = committing_turns(repo, hook, 1, first=1)
    assert "Fix: write the right content" in answers[0]["reason"]
    assert list(project_dir(repo).glob("findings.json.changed-*"))
    events = (project_dir(repo) / "events.jsonl").read_text()
    assert "findings.tampered" in events


def test_a_later_tasks_review_names_what_earlier_tasks_changed_as_context(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import git

    start(repo, manager, capsys, "stop")
    manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue", done=True), verdict_body("continue"), schema="Verdict")
    committing_turns(repo, hook, 1)
    assert state_of(repo)["autopilot"]["current_task"] == "T2"
    (repo / "file2.txt").write_text("two\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "T2")
    hook("Stop", payload("Stop", repo, stop_hook_active=True))
    first, second = (r.prompt_text for r in review_requests(manager))
    assert "<<<DATA ELSEWHERE" not in first
    begin = second.index("<<<DATA ELSEWHERE")
    context = second[begin : second.index(">>>", begin)]
    assert "file1.txt" in context and "file2.txt" not in context


def test_the_verdict_after_a_disputed_finding_sees_it(
    repo: Path,
    manager: FakeOpenAI,
    hook: Hook,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Disputed and said again with nothing new: no block, the verdict weighs it."""
    monkeypatch.setenv("AUTOPILOT_CODEX_REVIEW_NOT_CONVERGING", "10")
    start(repo, manager, capsys, "stop")
    manager.enqueue(*[review_body("fix") for _ in range(4)], schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    answers = committing_turns(repo, hook, 4)
    assert "marked disputed" in answers[2]["reason"]
    # Each Stop reviewed and judged in one call; the last one's verdict counted, and it saw
    # the disputed finding.
    assert manager.requests_for(schema="Verdict") == []
    verdicts = verdict_requests(manager)
    assert len(verdicts) == 4
    assert "Standing review findings:" in verdicts[-1].prompt_text
    assert "F1 [disputed" in verdicts[-1].prompt_text
    assert answers[3]["reason"].startswith("[autopilot-codex] Manager verdict: continue")


def test_a_cached_review_replayed_counts_toward_the_verbatim_limit(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    """The implementer runs tools but leaves the diff as it is: the review is replayed from
    the cache (no manager call), and the finding still reaches the model at most twice."""
    start(repo, manager, capsys, "stop")
    manager.enqueue(review_body("fix"), schema="Review")
    (repo / "file1.txt").write_text("wrong\n")
    answers = []
    for turn in range(6):
        hook("PostToolUse", edit_payload(repo))
        answers.append(hook("Stop", payload("Stop", repo, stop_hook_active=turn > 0)).json)
        if state_of(repo)["status"] != "running":
            break
    assert len(review_requests(manager)) == 1
    delivered = [a for a in answers if "Fix: write the right content" in a.get("reason", "")]
    assert len(delivered) == 2
    assert "marked disputed" in answers[2]["reason"]
    state = state_of(repo)
    assert state["status"] == "aborted" and "without a new commit" in state["stop_reason"]
    assert ledger_of(repo)["entries"][0]["status"] == "disputed"


def test_a_resume_after_not_converging_counts_afresh(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    manager.enqueue(*[review_body("fix") for _ in range(5)], schema="Review")
    committing_turns(repo, hook, 10)
    assert state_of(repo)["status"] == "paused"
    assert main(["-C", str(repo), "resume", "--session-id", "sess-1"]) == 0
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    answers = committing_turns(repo, hook, 1, first=10)
    # F1 stays disputed (not delivered again); the idle count starts over, so the verdict
    # judges the turn instead of an immediate second pause.
    assert state_of(repo)["status"] == "running"
    assert "Manager verdict: continue" in answers[0].get("reason", ""), (
        answers,
        state_of(repo)["stop_reason"],
    )
    assert ledger_of(repo)["entries"][0]["status"] == "disputed"


def test_status_shows_only_the_ledger_the_bridge_wrote_for_this_loop(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib

    start(repo, manager, capsys, "stop")
    manager.enqueue(review_body("fix"), schema="Review")
    committing_turns(repo, hook, 1)
    assert "Open review findings (this loop):" in status_text(repo, capsys)
    path = project_dir(repo) / "findings.json"
    digest = path.with_name("findings.json.sum")
    kept = digest.read_text()

    def sealed(text: str) -> None:
        """A ledger with the digest the bridge would write beside it."""
        path.write_text(text)
        digest.write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")

    # Without its digest the ledger is not the bridge's: said, and its findings not shown.
    digest.unlink()
    shown = status_text(repo, capsys)
    assert "Review findings: the ledger was changed outside the bridge" in shown
    assert "Open review findings" not in shown
    digest.write_text(kept)
    assert "Open review findings" in status_text(repo, capsys)
    # Another loop's ledger (an earlier plan's), and one that is not a ledger at all: nothing.
    ours = ledger_of(repo)
    other = {**ours, "loop": "0123456789abcdef"}
    for text in (json.dumps(other), "[1, 2]", json.dumps({**ours, "entries": 7})):
        sealed(text)
        shown = status_text(repo, capsys)
        assert "review findings" not in shown.lower(), text


ADVISORY = {
    "severity": "low",
    "file": "README.md",  # no task's diff touches it
    "line_start": 1,
    "line_end": 1,
    "title": "the readme has no usage section",
    "recommendation": "add a usage section to the readme",
}


def test_an_advisory_finding_said_again_and_again_counts_towards_not_converging(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: the same advisory finding in every review, on code the diff does not touch,
    and a manager that goes on: each repeat was a new finding, so the loop ran until stopped
    from outside. Now a repeat is the same finding, shown to the manager once, counted in
    `status`, and the reviews that only restate it pause the loop as not converging."""
    start(repo, manager, capsys, "stop")
    manager.enqueue(*[review_body("fix", findings=[ADVISORY]) for _ in range(12)], schema="Review")
    go_on = verdict_body("continue", instructions="keep polishing file1")
    manager.enqueue(*[go_on for _ in range(12)], schema="Verdict")
    answers = committing_turns(repo, hook, 10)
    state = state_of(repo)
    assert state["status"] == "paused", (len(answers), state["stop_reason"])
    assert state["stop_reason"].startswith("reviews not converging: 3 reviews in a row")
    assert len(review_requests(manager)) == 4  # raised, then restated three times
    entries = ledger_of(repo)["entries"]
    assert [(e["id"], e["status"], e["verbatim"]) for e in entries] == [("F1", "waived", 4)]
    # Shown to the manager once, in the review after its third raising.
    told = [r for r in review_requests(manager) if "Do not raise them again" in r.prompt_text]
    assert len(told) == 1 and "F1 [advisory, low, raised 3x]" in told[0].prompt_text
    assert not any(ADVISORY["title"] in a.get("reason", "") for a in answers)
    shown = status_text(repo, capsys)
    assert "Advisory findings raised again (1, not delivered):" in shown
    assert "F1 [advisory, low, raised 4x] the readme has no usage section (README.md)" in shown
