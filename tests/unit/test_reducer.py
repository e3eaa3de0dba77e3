"""The reducer's decision matrix: every guard, review and verdict branch."""

from __future__ import annotations

import os
from typing import Any

import pytest

from autopilot_codex import guards, hosts
from autopilot_codex.manager import Outcome
from autopilot_codex.manager.schemas import Review, Verdict
from autopilot_codex.state import Plan, State, Task
from autopilot_codex.styles.autopilot import caps, reducer
from autopilot_codex.styles.autopilot.record import AutopilotRecord, evolve, of
from autopilot_codex.styles.context import Limits

# The messages are read in Claude Code here: commands are named as its slash commands.
LIMITS = Limits(stall_limit=3, no_progress_limit=3, command=hosts.get("claude").command)
NOW = "2026-12-01T00:00:00+00:00"


def make_state(**update: Any) -> State:
    tasks = [
        Task(id=f"T{n}", title=f"task {n}", files=[], steps=["s"], acceptance=["a"], tests=[])
        for n in (1, 2, 3)
    ]
    base: dict[str, Any] = {
        "goal": "g",
        "plan": Plan(summary="p", tasks=tasks),
        "base_sha": "base",
        "worktree": "/w",
        "session_id": "s1",
        "own": AutopilotRecord(model="gpt-6.2-sol", current_task="T1", task_base_sha="base"),
    }
    return evolve(State(**base), **update)


def verdict(decision: str, done: bool = False) -> Outcome[Verdict]:
    value = Verdict(
        decision=decision,  # type: ignore[arg-type]
        reason="why",
        current_task_done=done,
        instructions="do it",
        findings=[],
    )
    return Outcome(value, cost_usd=0.25)


def review(decision: str, files: list[str] | None = None) -> Outcome[Review]:
    value = Review(decision=decision, summary="sum", findings=[], revert_files=files or [])  # type: ignore[arg-type]
    return Outcome(value, cost_usd=0.1)


FAILED: Outcome[Any] = Outcome(None, cost_usd=0.05, error="timed out")


@pytest.mark.parametrize(
    ("owner", "session", "expected"),
    [
        (None, "a", False),  # unowned: only a typed prompt claims it
        ("a", "a", True),
        ("a", "b", False),
        (None, None, False),
        (None, "", False),
        ("a", None, False),
    ],
)
def test_owns(owner: str | None, session: str | None, expected: bool) -> None:
    assert guards.owns(make_state(session_id=owner), session) is expected


def test_claim_never_sets_an_owner_only_a_prompt_does() -> None:
    assert guards.claim(make_state(session_id=None), "x").session_id is None
    assert guards.claim(make_state(session_id="x"), "x").session_id == "x"
    claimed = guards.claim(make_state(session_id=None), "x", typed=True)
    assert claimed.session_id == "x"


@pytest.mark.parametrize(
    ("update", "status", "event"),
    [
        ({"budget_used_usd": 5.0, "budget_usd": 5.0}, "stopped_budget", "stop.guard.budget"),
        ({"budget_used_usd": 7.0, "budget_usd": 5.0}, "stopped_budget", "stop.guard.budget"),
        (
            {"iteration": 30, "max_iterations": 30},
            "stopped_iteration_limit",
            "stop.guard.iterations",
        ),
        ({"no_progress_streak": 3}, "aborted", "stop.guard.no_progress"),
        ({"idle_stop_blocks": 3}, "paused", "stop.guard.stalled"),
        # Order: budget first, then iterations, then no progress, then stall.
        (
            {"budget_used_usd": 9.0, "iteration": 30, "max_iterations": 30},
            "stopped_budget",
            "stop.guard.budget",
        ),
        (
            {"iteration": 30, "max_iterations": 30, "no_progress_streak": 5},
            "stopped_iteration_limit",
            "stop.guard.iterations",
        ),
        # Idle (no tool since the blocks) is a stall first, paused like the verdict's stall.
        ({"no_progress_streak": 3, "idle_stop_blocks": 3}, "paused", "stop.guard.stalled"),
    ],
)
def test_stop_guards_fire_in_order(update: dict[str, Any], status: str, event: str) -> None:
    state, decision = caps.stop_guard(make_state(**update), stop_hook_active=True, limits=LIMITS)
    assert decision is not None
    assert decision.action == "allow"
    assert decision.event == event
    assert state.status == status
    assert state.stop_reason
    assert "[autopilot-codex]" in decision.message


@pytest.mark.parametrize(
    "update",
    [
        {},
        {"budget_used_usd": 4.99},
        {"iteration": 29},
        {"no_progress_streak": 2},
        {"idle_stop_blocks": 2},
    ],
)
def test_stop_guards_pass(update: dict[str, Any]) -> None:
    state, decision = caps.stop_guard(make_state(**update), stop_hook_active=True, limits=LIMITS)
    assert decision is None
    assert state.status == "running"
    assert state.stop_events == 1


def test_a_fresh_stop_breaks_the_chain_of_idle_blocks() -> None:
    state, decision = caps.stop_guard(
        make_state(idle_stop_blocks=3), stop_hook_active=False, limits=LIMITS
    )
    assert decision is None
    assert state.idle_stop_blocks == 0


def test_stall_limit_is_configurable() -> None:
    _, decision = caps.stop_guard(
        make_state(idle_stop_blocks=1), stop_hook_active=True, limits=Limits(stall_limit=1)
    )
    assert decision is not None and decision.event == "stop.guard.stalled"


@pytest.mark.parametrize(
    ("used", "estimate", "stops"),
    [(0.0, 1.0, False), (4.0, 1.0, False), (4.0, 1.01, True), (5.0, 0.0, False)],
)
def test_budget_guard_refuses_calls_that_could_overspend(
    used: float, estimate: float, stops: bool
) -> None:
    result = caps.budget_guard(
        make_state(budget_used_usd=used), estimate, "verdict.budget", now=None
    )
    assert (result is not None) is stops
    if result is not None:
        assert result[0].status == "stopped_budget"
        assert result[1].action == "allow"


def test_review_approve_records_and_allows_silently() -> None:
    state, decision = reducer.apply_review(
        make_state(), review("approve"), "h1", now=NOW, limits=LIMITS
    )
    assert decision.action == "allow" and decision.message == "" and decision.reason == ""
    assert (kept := of(state).last_review) is not None and kept.decision == "approve"
    assert of(state).cached_review("h1") is not None
    assert state.budget_used_usd == pytest.approx(0.1)


def test_review_fix_blocks_with_findings_and_does_not_advance() -> None:
    state, decision = reducer.apply_review(
        make_state(), review("fix"), "h1", now=NOW, limits=LIMITS
    )
    assert decision.blocks and "fix" in decision.reason
    assert of(state).current_task == "T1"


def test_review_reject_names_git_restore_of_the_files() -> None:
    state, decision = reducer.apply_review(
        make_state(task_base_sha="abcdef1234567890"),
        review("reject", ["a.py", "b c.py"]),
        "h1",
        now=NOW,
        limits=LIMITS,
        changed_files=["a.py", "b c.py"],
    )
    assert decision.blocks
    assert (
        "git restore --source=abcdef123456 --staged --worktree -- a.py 'b c.py'" in decision.reason
    )
    assert "re-plan" in decision.reason
    assert state.status == "running"


def test_review_failure_pauses_never_blocks_and_charges() -> None:
    state, decision = reducer.apply_review(make_state(), FAILED, "h1", now=NOW, limits=LIMITS)
    assert decision.action == "allow"
    assert state.status == "paused"
    assert "timed out" in (state.stop_reason or "")
    assert state.budget_used_usd == pytest.approx(0.05)
    assert of(state).cached_review("h1") is None


def test_review_cache_is_bounded_and_most_recent_first() -> None:
    state = make_state()
    for n in range(100):
        state, _ = reducer.apply_review(state, review("approve"), f"h{n}", now=NOW, limits=LIMITS)
    assert len(of(state).reviewed) == 64
    assert of(state).reviewed[0].diff_hash == "h99"


@pytest.mark.parametrize("decision", ["approve", "fix", "reject"])
def test_replay_matches_original(decision: str) -> None:
    state, first = reducer.apply_review(
        make_state(), review(decision, ["f"]), "h", now=NOW, limits=LIMITS
    )
    record = of(state).cached_review("h")
    assert record is not None
    again = reducer.replay_review(record)
    assert (again.action, again.reason) == (first.action, first.reason)


def test_verdict_done_allows_and_finishes() -> None:
    state, decision = reducer.apply_verdict(make_state(), verdict("done"), "head1", LIMITS, now=NOW)
    assert (decision.action, state.status, state.iteration) == ("allow", "done", 1)
    assert decision.message
    assert state.budget_used_usd == pytest.approx(0.25)


def test_verdict_abort_allows_and_aborts() -> None:
    state, decision = reducer.apply_verdict(
        make_state(), verdict("abort"), "head1", LIMITS, now=NOW
    )
    assert (decision.action, state.status) == ("allow", "aborted")


def test_verdict_continue_advances_when_task_done() -> None:
    state, decision = reducer.apply_verdict(
        make_state(), verdict("continue", done=True), "head1", LIMITS, now=NOW
    )
    assert decision.blocks
    assert of(state).current_task == "T2"
    assert of(state).completed_tasks == ["T1"]
    assert of(state).task_base_sha == "head1"
    assert "Task T2 (2/3)" in decision.reason
    assert "Task T1 accepted" in decision.reason
    assert "do it" in decision.reason
    assert state.idle_stop_blocks == 1
    assert of(state).no_progress_streak == 0


def test_verdict_continue_keeps_task_when_not_done() -> None:
    state, decision = reducer.apply_verdict(
        make_state(), verdict("continue"), "head1", LIMITS, now=NOW
    )
    assert decision.blocks and of(state).current_task == "T1" and "Task T1 (1/3)" in decision.reason


def test_last_task_done_but_continue_leaves_no_stale_contract() -> None:
    state = make_state(current_task="T3", completed_tasks=["T3"])
    state, decision = reducer.apply_verdict(
        state, verdict("continue", done=True), "h", LIMITS, now=NOW
    )
    assert of(state).current_task is None
    assert of(state).completed_tasks == ["T3"]
    assert "All planned tasks are done" in decision.reason and "do it" in decision.reason
    assert "Task T3 (" not in decision.reason


def test_no_progress_streak_counts_continues_without_commits_and_aborts_at_the_limit() -> None:
    state = make_state()
    state, d1 = reducer.apply_verdict(state, verdict("continue"), "base", LIMITS, now=NOW)
    state, d2 = reducer.apply_verdict(
        guards.on_tool(state), verdict("continue"), "base", LIMITS, now=NOW
    )
    assert (d1.blocks, d2.blocks, of(state).no_progress_streak) == (True, True, 2)
    # Tools ran (the implementer was busy) but nothing was committed: abort.
    state, d3 = reducer.apply_verdict(
        guards.on_tool(state), verdict("continue"), "base", LIMITS, now=NOW
    )
    assert d3.action == "allow" and state.status == "aborted" and of(state).no_progress_streak == 3
    assert d3.event == "verdict.no_progress"


def test_an_idle_implementer_is_paused_not_aborted() -> None:
    state = make_state()
    for _ in range(3):
        state, decision = reducer.apply_verdict(state, verdict("continue"), "base", LIMITS, now=NOW)
    assert decision.event == "verdict.stalled"
    assert state.status == "paused" and "stalled" in (state.stop_reason or "")


def test_done_completes_the_current_task() -> None:
    state, _ = reducer.apply_verdict(
        make_state(current_task="T3", completed_tasks=["T1", "T2"]),
        verdict("done"),
        "h",
        LIMITS,
        now=NOW,
    )
    assert of(state).completed_tasks == ["T1", "T2", "T3"] and of(state).current_task is None


def test_leaving_running_tells_the_implementer_too() -> None:
    decision: guards.Decision | None
    _, decision = reducer.apply_review(make_state(), FAILED, "h", now=NOW, limits=LIMITS)
    assert "no longer supervising" in decision.context
    _, decision = caps.budget_guard(
        make_state(budget_used_usd=4.99), 1.0, "review.budget", now=None
    ) or (
        None,
        None,
    )
    assert decision is not None and "no longer supervising" in decision.context


def test_a_new_commit_resets_the_streak() -> None:
    state = make_state(no_progress_streak=2, last_verdict_head="old")
    state, decision = reducer.apply_verdict(state, verdict("continue"), "new", LIMITS, now=NOW)
    assert decision.blocks and of(state).no_progress_streak == 0


def test_verdict_failure_pauses_counts_the_iteration_and_the_cost() -> None:
    state, decision = reducer.apply_verdict(make_state(), FAILED, "h", LIMITS, now=NOW)
    assert decision.action == "allow" and not decision.reason
    assert (state.status, state.iteration) == ("paused", 1)
    assert state.budget_used_usd == pytest.approx(0.05)
    assert "codex-resume" in decision.message


def test_resume_resets_counters_and_bumps_generation() -> None:
    state = make_state(
        status="paused", stop_reason="x", idle_stop_blocks=3, no_progress_streak=2, generation=4
    )
    resumed = guards.resume(state, budget_usd=10.0, max_iterations=None)
    assert (
        resumed.status,
        resumed.stop_reason,
        resumed.idle_stop_blocks,
        of(resumed).no_progress_streak,
    ) == ("running", None, 0, 0)
    assert resumed.generation == 5 and resumed.budget_usd == 10.0 and resumed.max_iterations == 30


def test_on_tool_resets_stall_and_counts() -> None:
    state = guards.on_tool(make_state(idle_stop_blocks=2, tool_events=4))
    assert (state.idle_stop_blocks, state.tool_events) == (0, 5)


def test_a_stop_right_after_compaction_is_never_blocked() -> None:
    state = guards.on_compact(make_state(idle_stop_blocks=2))
    state, decision = caps.stop_guard(state, stop_hook_active=True, limits=LIMITS)
    assert (
        decision is not None
        and decision.action == "allow"
        and decision.event == "stop.after_compaction"
    )
    assert state.status == "running" and not state.compaction_pending
    # The next stop is judged again.
    _, decision = caps.stop_guard(state, stop_hook_active=True, limits=LIMITS)
    assert decision is None


def test_a_tool_after_compaction_clears_it() -> None:
    state = guards.on_tool(guards.on_compact(make_state()))
    assert not state.compaction_pending


def test_each_continue_shows_the_user_a_banner() -> None:
    state, decision = reducer.apply_verdict(
        make_state(), verdict("continue", done=True), "h1", LIMITS, now=NOW
    )
    assert decision.message == "[autopilot-codex] continue (iteration 1/30, $0.25 of $5.00): T2"


def test_a_reject_restores_only_files_the_task_changed_and_says_what_it_dropped() -> None:
    state, decision = reducer.apply_review(
        make_state(task_base_sha="abcdef1234567890"),
        review("reject", ["a.py", "1", "README.md", "/etc/passwd"]),
        "h1",
        now=NOW,
        limits=LIMITS,
        changed_files=["a.py", "b.py"],
    )
    assert decision.event == "review.reject"
    assert "-- a.py\n" in decision.reason
    assert "README.md" not in decision.reason and "passwd" not in decision.reason
    assert (
        decision.note
        == "revert_files dropped (not changed by this task): 1, README.md, /etc/passwd"
    )


def test_a_reject_with_nothing_to_restore_is_a_fix() -> None:
    state, decision = reducer.apply_review(
        make_state(),
        review("reject", ["1", "2"]),
        "h1",
        now=NOW,
        limits=LIMITS,
        changed_files=["a.py"],
    )
    assert decision.event == "review.fix" and decision.blocks
    assert "git restore" not in decision.reason
    assert (kept := of(state).last_review) is not None and kept.decision == "fix"
    assert "a reject with nothing to restore is a fix" in decision.note


def test_a_task_called_done_without_a_new_commit_stays_current() -> None:
    state, decision = reducer.apply_verdict(
        make_state(task_base_sha="same"), verdict("continue", done=True), "same", LIMITS, now=NOW
    )
    assert of(state).current_task == "T1" and of(state).completed_tasks == []
    assert "Task T1 accepted" not in decision.reason and "Task T1 (1/3)" in decision.reason
    assert decision.note.startswith("T1 not advanced")


# -- background reviews and the in-flight slot --------------------------------------------------


def test_a_background_fix_waits_to_be_handed_over_once() -> None:
    state, decision = reducer.apply_background_review(make_state(), review("fix"), "d1", now=NOW)
    pending = of(state).pending_review
    assert decision.blocks and pending is not None
    assert state.budget_used_usd == pytest.approx(0.1)
    handed = reducer.take_pending(state, at_stop=True)
    assert handed is not None
    after, given = handed
    assert given.blocks and given.event == "review.fix.delivered"
    assert given.reason == pending.reason
    assert of(after).pending_review is None and after.idle_stop_blocks == 1
    assert reducer.take_pending(after, at_stop=False) is None


def test_a_background_approve_or_failure_leaves_nothing_to_hand_over() -> None:
    approved, _ = reducer.apply_background_review(make_state(), review("approve"), "d", now=NOW)
    assert of(approved).pending_review is None and of(approved).cached_review("d") is not None
    failed, decision = reducer.apply_background_review(make_state(), FAILED, "d", now=NOW)
    # Charged, but the loop runs on: the Stop reviews again.
    assert (failed.status, failed.budget_used_usd) == ("running", pytest.approx(0.05))  # type: ignore[comparison-overlap]
    assert decision.event == "review.unavailable.background" and not decision.blocks


def test_one_slot_in_flight_and_a_stale_one_is_reclaimed_with_its_worst_case() -> None:
    from autopilot_codex.styles.autopilot import inflight

    state = make_state()
    held = inflight.take(state, "review", pid=os.getpid(), token="a", now=100.0, timeout_s=10)
    assert held is not None
    held = inflight.reserve(held, "a", 0.5, "d1")
    assert inflight.take(held, "stop", pid=os.getpid(), token="b", now=101.0, timeout_s=10) is None
    # Past its deadline (or from an older loop, or its process gone) the slot is taken over.
    late = inflight.take(held, "stop", pid=os.getpid(), token="b", now=1000.0, timeout_s=10)
    assert late is not None and late.inflight is not None and late.inflight.token == "b"
    assert late.budget_used_usd == pytest.approx(0.5)
    older = held.evolve(generation=held.generation + 1)
    assert inflight.take(older, "stop", pid=1, token="c", now=101.0, timeout_s=10) is not None
    assert held.inflight is not None
    dead = inflight.reclaim(held.evolve(inflight=held.inflight.evolve(pid=2**22 + 7)), 101.0)
    assert dead[1] is not None and dead[0].inflight is None
    assert inflight.release(held, "b") == held and inflight.release(held, "a").inflight is None
