"""Background reviews: the edit's hook answers at once, one manager call is in flight per loop,
a burst of edits is coalesced, and a review killed or orphaned half-way leaves the loop sound.

The hooks are real processes where the timing matters (the launcher, as the host starts them);
the workers are the real detached processes the hooks start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from autopilot_codex.styles.autopilot.inflight import pid_alive
from tests.conftest import edit_payload, payload, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import Hook, answer_of, events_of, state_of
from tests.reliability.test_concurrency import fire, launcher_env
from tests.reliability.test_session_guards import wait_for_request
from tests.reviews import review_requests, wait_inflight, wait_reviews


def read_payload(repo: Path) -> dict[str, object]:
    return payload("PostToolUse", repo, tool_name="Read", tool_input={"file_path": "x"})


def reviews(manager: FakeOpenAI) -> int:
    return len(manager.requests_for(schema="Review"))


# How long the server holds the answer to a review the loop must not wait for.
OUTDATED_S = 120.0


def wait_gone(pid: int, timeout: float = OUTDATED_S) -> None:
    """Wait for a worker to leave; one still there when its held answer would come stayed."""
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        assert time.monotonic() < deadline, f"worker {pid} outlived the loop"
        time.sleep(0.05)


def test_an_edit_hook_answers_before_a_slow_review_and_the_next_hook_carries_its_fix(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    # Out until the test lets it come back: a hook that waited for it would never answer.
    released = threading.Event()
    manager.enqueue(Reply(body=review_body("fix"), hold=released), schema="Review")
    (planned / "file1.txt").write_text("wrong\n")
    assert answer_of(hook("PostToolUse", edit_payload(planned))) == {}
    assert state_of(planned)["autopilot"]["pending_review"] is None
    slot = wait_inflight(planned)
    assert slot["kind"] == "review" and slot["reserved_usd"] > 0
    # Hooks while the review is out speak only if they have something to say.
    assert answer_of(hook("PostToolUse", read_payload(planned))) == {}
    released.set()
    state = wait_reviews(planned)
    assert state["autopilot"]["pending_review"]["decision"] == "fix"
    out = answer_of(hook("PostToolUse", read_payload(planned)))
    assert out["decision"] == "block" and "wrong content" in out["reason"]
    assert state_of(planned)["autopilot"]["pending_review"] is None
    assert reviews(manager) == 1


def test_a_burst_of_edits_costs_one_or_two_reviews_and_the_last_diff_is_reviewed(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    # The first review is out for the whole burst, however long a loaded machine takes.
    released = threading.Event()
    manager.enqueue(Reply(body=review_body("approve"), hold=released), schema="Review")
    manager.default = Reply(body=review_body("approve"))
    for n in range(10):
        (planned / "file1.txt").write_text(f"version {n}\n")
        assert answer_of(hook("PostToolUse", edit_payload(planned))) == {}
    released.set()
    wait_reviews(planned)
    assert 1 <= reviews(manager) <= 2
    assert "+version 9" in manager.requests_for(schema="Review")[-1].prompt_text
    # The final diff is in the cache: the Stop replays it and asks only for a verdict.
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    assert answer_of(hook("Stop", payload("Stop", planned)))["decision"] == "block"
    assert reviews(manager) <= 2
    assert len(manager.requests_for(schema="Verdict")) == 1


def test_twenty_parallel_edit_hooks_of_one_diff_make_one_review_call(
    planned: Path, manager: FakeOpenAI
) -> None:
    manager.default = Reply(body=review_body("approve"), delay=0.5)
    (planned / "file1.txt").write_text("one\n")
    results = fire([("PostToolUse", edit_payload(planned))] * 20, launcher_env())
    assert all((r.code, r.answer) == (0, {}) for r in results), results[0].stderr
    state = wait_reviews(planned)
    assert reviews(manager) == 1
    assert state["tool_events"] == 20
    assert state["autopilot"]["last_review"]["decision"] == "approve"


def test_twenty_parallel_stops_make_one_verdict_call(planned: Path, manager: FakeOpenAI) -> None:
    # The verdict is out until the other nineteen Stops have found the slot busy.
    released = threading.Event()
    manager.default = Reply(body=verdict_body("continue"), hold=released)

    def release_when_all_busy() -> None:
        deadline = time.monotonic() + 240
        try:
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError, ValueError):  # a line being written
                    if [e["event"] for e in events_of(planned)].count("stop.busy") >= 19:
                        break
                time.sleep(0.05)
        finally:
            released.set()

    watcher = threading.Thread(target=release_when_all_busy, daemon=True)
    watcher.start()
    results = fire([("Stop", payload("Stop", planned))] * 20, launcher_env())
    watcher.join()
    assert all(r.code == 0 for r in results)
    judged = [r for r in results if r.answer.get("decision") == "block"]
    assert len(judged) == 1 and all(r.answer == {} for r in results if r not in judged)
    state = state_of(planned)
    assert len(manager.requests_for(schema="Verdict")) == 1 == state["iteration"]
    assert state["stop_events"] == 20 and state["inflight"] is None
    assert [e["event"] for e in events_of(planned)].count("stop.busy") == 19


def test_a_stop_waits_for_the_review_in_flight_and_never_skips_its_fix(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    manager.enqueue(Reply(body=review_body("fix"), delay=2.0), schema="Review")
    (planned / "file1.txt").write_text("wrong\n")
    hook("PostToolUse", edit_payload(planned))
    wait_inflight(planned)
    out = answer_of(hook("Stop", payload("Stop", planned)))
    assert out["decision"] == "block" and "wrong content" in out["reason"]
    state = state_of(planned)
    # The review's block answered the Stop: a turn for the iteration cap (issue 23).
    assert manager.requests_for(schema="Verdict") == [] and state["iteration"] == 1
    assert (state["inflight"], state["autopilot"]["pending_review"]) == (None, None)
    assert reviews(manager) == 1
    # Ending the turn again without touching the diff replays the fix: never `done` over it.
    again = answer_of(hook("Stop", payload("Stop", planned, stop_hook_active=True)))
    assert again["reason"] == out["reason"]
    assert manager.requests_for(schema="Verdict") == []


def test_a_stop_after_an_approving_review_in_flight_judges_without_reviewing_again(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    manager.enqueue(Reply(body=review_body("approve"), delay=2.0), schema="Review")
    manager.enqueue(verdict_body("done"), schema="Verdict")
    (planned / "file1.txt").write_text("right\n")
    hook("PostToolUse", edit_payload(planned))
    wait_inflight(planned)
    out = answer_of(hook("Stop", payload("Stop", planned)))
    assert "done" in out["systemMessage"]
    assert reviews(manager) == 1
    verdict = manager.requests_for(schema="Verdict")[0]
    assert verdict.received_at > manager.requests_for(schema="Review")[0].received_at + 1.5


def test_a_worker_killed_mid_call_is_reclaimed_charged_and_its_review_redone(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    # Held for longer than any loaded machine takes over the rest (released at teardown).
    manager.enqueue(Reply(body=review_body("approve"), delay=OUTDATED_S), schema="Review")
    manager.enqueue(review_body("fix"), schema="Review")
    (planned / "file1.txt").write_text("wrong\n")
    before = state_of(planned)["budget_used_usd"]
    hook("PostToolUse", edit_payload(planned))
    slot = wait_inflight(planned)
    wait_for_request(manager, "Review")  # killed mid-call, not before it
    os.killpg(slot["pid"], signal.SIGKILL)
    wait_gone(slot["pid"])
    # The next Stop finds the slot of a dead worker: it takes it over, charges the dead
    # call's worst case, and reviews the diff itself.
    out = answer_of(hook("Stop", payload("Stop", planned)))
    assert out.get("decision") == "block", [e["event"] for e in events_of(planned)]
    assert "wrong content" in out["reason"]
    state = state_of(planned)
    assert state["inflight"] is None
    assert state["budget_used_usd"] >= before + slot["reserved_usd"]
    reclaimed = [e for e in events_of(planned) if e["event"] == "inflight.reclaimed"]
    assert reclaimed[0]["pid"] == slot["pid"]
    assert reclaimed[0]["charged_usd"] == pytest.approx(slot["reserved_usd"], abs=1e-6)
    # The Stop's own review rode on its verdict's call.
    assert [r.schema_name for r in review_requests(manager)] == ["Review", "Judgement"]


def test_stopping_the_loop_during_a_review_ends_the_worker_and_still_counts_the_cost(
    planned: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.cli import main

    manager.enqueue(Reply(body=review_body("fix"), delay=OUTDATED_S), schema="Review")
    (planned / "file1.txt").write_text("wrong\n")
    before = state_of(planned)["budget_used_usd"]
    hook("PostToolUse", edit_payload(planned))
    slot = wait_inflight(planned)
    wait_for_request(manager, "Review")
    assert main(["-C", str(planned), "stop"]) == 0
    capsys.readouterr()
    wait_gone(slot["pid"])  # before its answer comes
    state = wait_reviews(planned)
    assert state["status"] == "stopped" and state["autopilot"]["pending_review"] is None
    assert state["budget_used_usd"] == pytest.approx(before + slot["reserved_usd"])
    assert events_of(planned)[-1]["event"] == "review.abandoned"
    for event in ("PostToolUse", "Stop"):
        assert hook(event, payload(event, planned)).stdout == ""


def test_a_stop_supersedes_a_review_of_an_older_diff_and_reviews_the_final_one(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    # Held for longer than any loaded machine takes over the rest (released at teardown).
    manager.enqueue(Reply(body=review_body("approve"), delay=OUTDATED_S), schema="Review")
    manager.enqueue(review_body("fix"), schema="Review")
    (planned / "file1.txt").write_text("first\n")
    before = state_of(planned)["budget_used_usd"]
    hook("PostToolUse", edit_payload(planned))
    slot = wait_inflight(planned)
    wait_for_request(manager, "Review")
    (planned / "file1.txt").write_text("final\n")  # an edit whose hook finds the slot busy
    assert answer_of(hook("PostToolUse", edit_payload(planned))) == {}
    began = time.monotonic()
    out = answer_of(hook("Stop", payload("Stop", planned)))
    # The outdated review's answer was still held by the server: the Stop did not wait for it.
    assert time.monotonic() - began < OUTDATED_S
    assert out["decision"] == "block" and "wrong content" in out["reason"]
    # One call for the Stop: the final diff's review folded into the verdict's.
    (folded,) = manager.requests_for(schema="Judgement")
    assert "+final" in folded.prompt_text
    wait_gone(slot["pid"])
    state = state_of(planned)
    assert state["inflight"] is None
    assert state["budget_used_usd"] >= before + slot["reserved_usd"]
    assert "review.superseded" in [e["event"] for e in events_of(planned)]


def test_committing_a_reviewed_change_keeps_its_review_key(repo: Path) -> None:
    from autopilot_codex.gitrepo import diff_since
    from autopilot_codex.styles.autopilot.effects import diff_key
    from tests.conftest import git

    base = git(repo, "rev-parse", "HEAD")
    (repo / "new.txt").write_text("one\n")
    (repo / "more.txt").write_text("a\nb\n")
    (repo / "README.md").write_text("# changed\n")
    before = diff_key(diff_since(repo, base))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the same change, committed")
    assert diff_key(diff_since(repo, base)) == before
    (repo / "new.txt").write_text("two\n")
    assert diff_key(diff_since(repo, base)) != before
