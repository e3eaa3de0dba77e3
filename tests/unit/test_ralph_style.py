"""The ralph style's pure parts: promise detection, the Stop decision table, start checks."""

from __future__ import annotations

import json

import pytest

from autopilot_codex import typedjson
from autopilot_codex.guards import owns
from autopilot_codex.state import State
from autopilot_codex.state_ranges import parse_state
from autopilot_codex.styles.ralph.reducer import (
    KIND_OF_WHY,
    on_stop,
    promise_met,
    result_record,
    start,
    validate_start,
)

T0 = 1_000_000.0


def state(**extra: object) -> State:
    base = start(prompt="Make the tests pass.", now=T0, completion_promise="DONE")
    return base.evolve(**extra)


def stop(
    s: State,
    message: str = "working",
    *,
    active: bool = False,
    tool: bool = True,
    now: float = T0 + 60,
) -> tuple[State, str, str]:
    new, decision = on_stop(
        s, last_message=message, stop_hook_active=active, tool_ran_since_last_block=tool, now=now
    )
    return new, KIND_OF_WHY.get(decision.why, "continue"), decision.action


# -- promise detection ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "<promise>DONE</promise>",
        "All tests pass.\n\n<promise>DONE</promise>\n",
        "All tests pass.\r\n<promise>DONE</promise>\r\n\r\n",
        "  <promise>  DONE  </promise>  ",
        # claude-plugins-official#3632: a correct tag as the last content must be seen.
        "Copy revised.\n<promise>\nDONE\n</promise>",
        "```\nold output\n```\n<promise>DONE</promise>",
        # A tag on its own line counts whatever follows on later lines.
        "<promise>DONE</promise>\nAll 14 tests pass.",
        # A mention inside a sentence is skipped; the tag on its own line after it counts.
        "I may now write <promise>DONE</promise>:\n<promise>DONE</promise>",
    ],
)
def test_promise_kept(message: str) -> None:
    assert promise_met(message, "DONE")


def test_promise_whitespace_normalised_on_both_sides() -> None:
    assert promise_met("<promise>COPY\n   COMPLETE</promise>", "COPY  COMPLETE")


@pytest.mark.parametrize(
    "message",
    [
        # claude-code#81827: a bare message equal to the promise has no tag.
        "DONE",
        "  DONE \n",
        # A negated or passing mention inside a sentence.
        "I will not output <promise>DONE</promise> yet: two tests fail.",
        "Once finished I'll say <promise>DONE</promise>.",
        "Not done. The promise is `<promise>DONE</promise>`.",
        "`<promise>DONE</promise>`",
        # Text on one side of the tag only is still a sentence.
        "Finished: <promise>DONE</promise>",
        "<promise>DONE</promise> (once the last test passes)",
        # Quoting the instructions in a fence is not making the promise.
        "The loop ends when I write:\n```\n<promise>DONE</promise>\n```\nNot yet.",
        "Unclosed fence:\n~~~\n<promise>DONE</promise>",
        # Case-sensitive, exact text.
        "<promise>done</promise>",
        "<promise>DONE!</promise>",
        "<promise>NOT DONE</promise>",
        "<promise></promise>",
        # Half a tag.
        "<promise>DONE",
        # claude-code#30625: a tool_use-only final message has no text at all.
        "",
    ],
)
def test_promise_not_kept(message: str) -> None:
    assert not promise_met(message, "DONE")


def test_empty_promise_never_met() -> None:
    assert not promise_met("<promise></promise>", "  ")


# -- the Stop decision ---------------------------------------------------------------------


def test_continue_reinjects_the_prompt_under_a_banner() -> None:
    new, decision = on_stop(
        state(iteration=2),
        last_message="did a bit",
        stop_hook_active=True,
        tool_ran_since_last_block=True,
        now=T0 + 5,
    )
    assert decision.action == "block" and decision.blocks and not decision.why
    assert new.iteration == 3
    assert decision.reason.startswith("[autopilot-codex] Ralph iteration 3/50 — ")
    assert decision.reason.endswith("\n\nMake the tests pass.")
    assert "<promise>DONE</promise>" in decision.reason
    assert decision.message == "Ralph iteration 3/50"


def test_promise_ends_the_loop() -> None:
    new, kind, action = stop(state(iteration=4), "ok\n<promise>DONE</promise>")
    assert (kind, action, new.iteration) == ("done", "allow", 4)


def test_promise_on_the_last_iteration_is_reported_as_kept() -> None:
    # ralph-orchestrator#369: the promise and the cap on the same iteration.
    _, kind, _ = stop(state(iteration=50), "<promise>DONE</promise>")
    assert kind == "done"


def test_bare_promise_word_does_not_end_the_loop() -> None:
    _, kind, action = stop(state(), "DONE")
    assert (kind, action) == ("continue", "block")


def test_tool_use_only_final_message_continues() -> None:
    _, kind, _ = stop(state(), "")
    assert kind == "continue"


def test_cap_stops_after_max_iterations() -> None:
    s = state(max_iterations=3)
    kinds = []
    for _ in range(5):
        s, kind, _ = stop(s)
        kinds.append(kind)
        if kind != "continue":
            break
    assert kinds == ["continue", "continue", "stopped"]
    assert s.iteration == 3


def test_no_promise_runs_to_the_cap() -> None:
    s = start(prompt="p", now=T0, max_iterations=2)
    new, decision = on_stop(
        s,
        last_message="<promise>DONE</promise>",
        stop_hook_active=False,
        tool_ran_since_last_block=True,
        now=T0,
    )
    assert decision.blocks and not decision.why
    assert "No completion promise" in decision.reason
    _, kind, _ = stop(new)
    assert kind == "stopped"


def test_unlimited_iterations_end_at_the_time_limit() -> None:
    s = start(prompt="p", now=T0, max_iterations=0, max_seconds=600).evolve(iteration=10_000)
    new, decision = on_stop(
        s, last_message="", stop_hook_active=False, tool_ran_since_last_block=True, now=T0 + 599
    )
    assert decision.blocks and not decision.why
    assert decision.message == "Ralph iteration 10001/unlimited"
    _, kind, _ = stop(new, now=T0 + 600)
    assert kind == "timed_out"


def test_stall_yields_before_the_host_cap() -> None:
    # Blocks in a row with no tool run: stop on our own before Claude Code's cap of 8.
    s = state()
    s, kind, _ = stop(s, active=False, tool=False)
    assert kind == "continue"
    blocks = 1
    while True:
        s, kind, _ = stop(s, active=True, tool=False)
        if kind != "continue":
            break
        blocks += 1
    assert kind == "stalled"
    assert blocks == 3 < 8


def test_a_tool_run_resets_the_stall_count() -> None:
    s = state(idle_stop_blocks=2)
    s, kind, _ = stop(s, active=True, tool=True)
    assert kind == "continue" and s.idle_stop_blocks == 1


def test_a_broken_block_chain_resets_the_stall_count() -> None:
    # stop_hook_active false: the previous Stop was not blocked (the user typed in between).
    s, kind, _ = stop(state(idle_stop_blocks=3), active=False, tool=False)
    assert kind == "continue" and s.idle_stop_blocks == 1


def test_stalled_with_the_chain_intact() -> None:
    _, kind, action = stop(state(idle_stop_blocks=3), active=True, tool=False)
    assert (kind, action) == ("stalled", "allow")


# -- start, session, record ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"prompt": "  "}, "needs a prompt"),
        ({"prompt": "p", "max_iterations": -1}, "0 or more"),
        ({"prompt": "p", "max_iterations": 0}, "needs a budget or a time limit"),
        ({"prompt": "p", "max_iterations": 0, "budget_usd": 0.0}, "needs a budget"),
        ({"prompt": "p", "completion_promise": " "}, "must not be empty"),
        ({"prompt": "p", "completion_promise": "</promise>"}, "'<' or '>'"),
        ({"prompt": "p", "completion_promise": "a < b"}, "'<' or '>'"),
        ({"prompt": "p", "completion_promise": "b > a"}, "'<' or '>'"),
        ({"prompt": "p", "stall_limit": 8}, "between 1 and 7"),
    ],
)
def test_validate_start_refuses(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment) as info:
        validate_start(**kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_unlimited_allowed_with_a_budget() -> None:
    validate_start(prompt="p", max_iterations=0, budget_usd=5.0)
    assert start(prompt="p", now=T0, max_iterations=0, budget_usd=5.0).max_iterations == 0


def test_start_keeps_the_starting_session() -> None:
    assert start(prompt="p", now=T0, session_id="sess-a").session_id == "sess-a"
    assert start(prompt="p", now=T0, session_id="").session_id is None


def test_default_cap_is_50() -> None:
    assert start(prompt="p", now=T0).max_iterations == 50


@pytest.mark.parametrize("sid", [None, "", "null"])
def test_no_session_owns_nothing(sid: str | None) -> None:
    assert not owns(state(), sid)


@pytest.mark.parametrize("stored", [None, "", "null"])
def test_an_unclaimed_loop_is_not_claimed_by_a_hook(stored: str | None) -> None:
    # Only a prompt the user typed claims it (guards.claim, at UserPromptSubmit).
    assert not owns(state(session_id=stored), "sess-a")


def test_another_sessions_loop_is_left_alone() -> None:
    assert not owns(state(session_id="sess-a"), "sess-b")
    assert owns(state(session_id="sess-a"), "sess-a")


def test_state_round_trips_through_the_state_file() -> None:
    s = state(session_id="s", iteration=7, idle_stop_blocks=1, budget_usd=2.5)
    data = json.loads(s.to_json())
    assert parse_state(data).evolve(plan=s.plan) == s
    # The record holds only what the envelope lacks.
    assert data["ralph"] == {
        "prompt": "Make the tests pass.",
        "completion_promise": "DONE",
        "stall_limit": 3,
        "tools_at_block": 0,
    }
    with pytest.raises(typedjson.Invalid, match="iteration"):
        parse_state({**data, "iteration": "7"})


def test_result_record() -> None:
    record = result_record(state(iteration=5, session_id="s"), "promise", T0 + 90.5)
    assert record["why"] == "promise"
    assert record["iterations"] == 5
    assert record["duration_s"] == 90.5
    assert record["completion_promise"] == "DONE"
    json.dumps(record)


def test_the_time_limit_says_how_long_the_loop_ran_and_by_how_much_it_went_over() -> None:
    s = start(prompt="p", now=T0, max_iterations=0, max_seconds=600)
    _, decision = on_stop(
        s, last_message="", stop_hook_active=False, tool_ran_since_last_block=True, now=T0 + 630
    )
    assert decision.message.endswith("time limit reached: 10m30s of 10m (30s over)")
