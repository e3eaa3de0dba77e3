"""One manager latency per Stop (issue 26): a Stop whose final diff no review has seen reviews
it in the verdict's call; a review in flight of that diff is waited for and not repeated; a
review of an older diff is cancelled and charged once, at its worst case.

The hooks are the real hook entry points; the background workers are the real detached
processes; the manager is the fake OpenAI server, and every assertion on what the manager was
asked reads what that server received.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import edit_payload, payload, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import Hook, answer_of, events_of, start_loop, state_of
from tests.reliability.test_background_reviews import wait_gone
from tests.reliability.test_session_guards import wait_for_request
from tests.reviews import wait_inflight, wait_reviews


def calls(manager: FakeOpenAI) -> list[str | None]:
    """The schemas the manager was asked for after the plan, in order."""
    return [r.schema_name for r in manager.requests if r.schema_name != "Plan"]


def charged(planned: Path, event: str) -> list[float]:
    return [float(e["cost_usd"]) for e in events_of(planned) if e["event"] == event]


def test_a_stop_mode_stop_reviews_the_whole_final_diff_and_judges_in_one_call(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start_loop(repo, manager, capsys, "--review", "stop")
    lines = [f"line {n} of the final change" for n in range(120)]
    (repo / "file1.txt").write_text("\n".join(lines) + "\n")
    (repo / "file2.txt").write_text("the second file\n")
    before = state_of(repo)["budget_used_usd"]
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    out = answer_of(hook("Stop", payload("Stop", repo)))
    assert out["decision"] == "block" and "Manager verdict: continue" in out["reason"]
    assert calls(manager) == ["Judgement"]
    (request,) = manager.requests_for(schema="Judgement")
    # The whole diff, every line of it, in the one call; and the review's instructions.
    for line in [*lines, "the second file"]:
        assert f"+{line}\n" in request.prompt_text
    assert "Diff too large" not in request.prompt_text
    assert "In `review`:" in request.prompt_text and "In `verdict`:" in request.prompt_text
    assert "Open findings from earlier reviews of this task: none." in request.prompt_text
    # Both parts applied: the review cached for the diff, the verdict counted once.
    state = state_of(repo)
    assert state["autopilot"]["last_review"]["decision"] == "approve"
    assert state["autopilot"]["last_verdict"]["decision"] == "continue"
    assert state["iteration"] == 1 and state["inflight"] is None
    # Charged once: the verdict's line carries the call's cost, the review's line none.
    (cost,) = charged(repo, "verdict.continue")
    assert cost > 0 and "cost_usd" not in events_of(repo)[-2]
    assert events_of(repo)[-2]["event"] == "review.approve"
    assert state["budget_used_usd"] == pytest.approx(before + cost)


def test_a_folded_fix_blocks_and_its_verdict_is_not_applied(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start_loop(repo, manager, capsys, "--review", "stop")
    (repo / "file1.txt").write_text("wrong\n")
    manager.enqueue(review_body("fix"), schema="Review")
    manager.enqueue(verdict_body("done"), schema="Verdict")
    out = answer_of(hook("Stop", payload("Stop", repo)))
    assert out["decision"] == "block" and "wrong content" in out["reason"]
    state = state_of(repo)
    assert state["status"] == "running" and state["autopilot"]["last_verdict"] is None
    # The review's block is the turn (issue 23), and the finding is in the ledger.
    assert state["iteration"] == 1
    (cost,) = charged(repo, "review.fix")
    assert cost > 0
    ledger = json.loads((project_dir(repo) / "findings.json").read_text())
    assert [e["title"] for e in ledger["entries"]] == ["wrong content"]
    assert calls(manager) == ["Judgement"]


def test_a_stop_waits_for_the_review_of_its_own_diff_and_makes_no_second_review(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    manager.enqueue(Reply(body=review_body("approve"), delay=2.0), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    (planned / "file1.txt").write_text("right\n")
    hook("PostToolUse", edit_payload(planned))
    slot = wait_inflight(planned)
    wait_for_request(manager, "Review")
    out = answer_of(hook("Stop", payload("Stop", planned)))
    assert out["decision"] == "block"
    # The review in flight was of the judged diff: waited for, its answer used, no fold.
    assert calls(manager) == ["Review", "Verdict"]
    assert "review.superseded" not in [e["event"] for e in events_of(planned)]
    wait_gone(slot["pid"])
    assert state_of(planned)["inflight"] is None


def test_a_late_review_of_an_older_diff_is_cancelled_and_charged_once(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    # Held for longer than any loaded machine takes over the rest (released at teardown).
    manager.enqueue(Reply(body=review_body("approve"), delay=120.0), schema="Review")
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    (planned / "file1.txt").write_text("first\n")
    before = state_of(planned)["budget_used_usd"]
    hook("PostToolUse", edit_payload(planned))
    slot = wait_inflight(planned)
    wait_for_request(manager, "Review")
    (planned / "file1.txt").write_text("final\n")  # its hook finds the slot busy
    assert answer_of(hook("PostToolUse", edit_payload(planned))) == {}
    began = time.monotonic()
    out = answer_of(hook("Stop", payload("Stop", planned)))
    assert time.monotonic() - began < 100  # not waited for: its answer would take 120 s
    assert out["decision"] == "block" and "Manager verdict: continue" in out["reason"]
    assert calls(manager) == ["Review", "Judgement"]
    assert "+final" in manager.requests_for(schema="Judgement")[0].prompt_text
    # The cancelled worker leaves without charging anything more.
    wait_gone(slot["pid"])
    state = wait_reviews(planned)
    events = events_of(planned)
    superseded = [e for e in events if e["event"] == "review.superseded"]
    assert len(superseded) == 1 and superseded[0]["pid"] == slot["pid"]
    assert superseded[0]["charged_usd"] == pytest.approx(slot["reserved_usd"], abs=1e-6)
    names = [e["event"] for e in events]
    assert "review.abandoned" not in names and "inflight.reclaimed" not in names
    (cost,) = charged(planned, "verdict.continue")
    assert state["budget_used_usd"] == pytest.approx(before + slot["reserved_usd"] + cost)
