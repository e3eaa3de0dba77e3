"""The ralph style through the real hook path, with the loop planted through the CLI.

Also one test per ralph complaint of the peers (docs/peers.md §3) that the reducer's own table
tests do not already pin: a wedged Stop chain (1), cross-session bleed (2), cancel that does not
cancel (4), completion read from the wrong place (5), compaction loops (9).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from autopilot_codex.paths import active_marker, project_dir
from tests.conftest import Hook, HookRun, cli, payload, state_of
from tests.fakes.openai_server import FakeOpenAI

PROMISE = "<promise>ALL GREEN</promise>"


def start(
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    session: str | None = "sess-1",
    words: bool = True,
) -> str:
    argv = ["-C", str(repo), "ralph", "--completion-promise", "ALL GREEN", *extra]
    if session is not None:
        argv += ["--session-id", session]
    if words:
        argv += ["Make", "the", "tests", "pass."]
    code, out = cli(capsys, *argv)
    assert code == 0, out
    return out


def stop(
    hook: Hook, repo: Path, message: str = "Still working.", session: str = "sess-1", **extra: Any
) -> HookRun:
    return hook("Stop", payload("Stop", repo, session, last_assistant_message=message, **extra))


def tool(hook: Hook, repo: Path, session: str = "sess-1", event: str = "PostToolUse") -> HookRun:
    return hook(
        event, payload(event, repo, session, tool_name="Bash", tool_input={"command": "pytest"})
    )


def result_of(repo: Path) -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads((project_dir(repo) / "last.json").read_text()))


# -- the loop ---------------------------------------------------------------------------------


def test_start_prints_the_prompt_and_status_shows_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = start(repo, capsys)
    assert "ralph loop started: iteration 1/50" in out
    assert "<promise>ALL GREEN</promise>" in out
    assert out.rstrip().endswith("Make the tests pass.")
    assert active_marker(repo).exists()
    code, text = cli(capsys, "-C", str(repo), "status")
    assert code == 0
    assert "ralph running — iteration 1/50" in text
    assert "Prompt: Make the tests pass." in text
    assert "Promise: ALL GREEN" in text
    code, raw = cli(capsys, "-C", str(repo), "status", "--json")
    data = json.loads(raw)
    assert (data["style"], data["ralph"]["prompt"]) == ("ralph", "Make the tests pass.")


def test_started_from_a_terminal_it_names_the_terminal_s_cancel_and_counts_right(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: started from a terminal, the loop told the user to cancel with a slash
    command, and a cap of one read "1 iterations"."""
    argv = ["-C", str(repo), "ralph", "--max-iterations", "1", "--session-id", "s", "Go."]
    _, out = cli(capsys, *argv)
    assert "the loop runs 1 iteration." in out
    assert (
        "Cancel with autopilot-codex cancel (in a terminal) or /autopilot-codex:cancel-ralph" in out
    )
    cli(capsys, "-C", str(repo), "cancel")
    _, inside = cli(capsys, "--from", "claude", *argv)
    assert "Cancel with /autopilot-codex:cancel-ralph." in inside


def test_status_abbreviates_a_long_prompt_with_a_marker(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    long = tmp_path / "prompt.md"
    long.write_text("word\n" * 400)
    start(repo, capsys, "--prompt-file", str(long), words=False)
    _, text = cli(capsys, "-C", str(repo), "status")
    line = next(x for x in text.splitlines() if x.startswith("Prompt:"))
    assert line.endswith(" [... 1699 more characters]") and len(line) < 400
    assert state_of(repo)["ralph"]["prompt"] == ("word\n" * 400).strip()


def test_a_stop_without_the_promise_feeds_the_prompt_back(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    result = stop(hook, repo)
    answer = result.json
    assert answer["decision"] == "block"
    assert answer["reason"].startswith("[autopilot-codex] Ralph iteration 2/50 — ")
    assert answer["reason"].endswith("Make the tests pass.")
    # No wall in the test's home: the banner says the loop is unguarded.
    assert answer["systemMessage"] == (
        "Ralph iteration 2/50 · $0.00 spent · UNGUARDED: the rails are a seatbelt, not a wall"
    )
    # The iteration is kept once, in the envelope (schema 3), not again in the ralph record.
    assert (state_of(repo)["iteration"], "iteration" in state_of(repo)["ralph"]) == (2, False)


def test_the_promise_ends_the_loop_and_keeps_a_result(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    tool(hook, repo)
    assert stop(hook, repo).json["decision"] == "block"
    result = stop(hook, repo, f"All tests pass.\n{PROMISE}")
    assert "decision" not in result.json
    assert result.json["systemMessage"].startswith(
        "[autopilot-codex] ralph done: promise kept at iteration 2. Spent: manager $0.00 · "
        "implementer $0.00 · total $0.00; "
        "see what it did: autopilot-codex report."
    )
    assert not active_marker(repo).exists()
    assert state_of(repo)["status"] == "done"
    record = result_of(repo)
    assert (record["why"], record["iterations"]) == ("promise", 2)
    assert record["duration_s"] >= 0
    _, text = cli(capsys, "-C", str(repo), "status")
    assert "ralph done" in text and "Result: promise after 2 iterations" in text
    # Off is off: the next Stop is the silent allow.
    assert stop(hook, repo).stdout == ""


def test_a_finished_loop_s_record_and_prompt_outlive_the_next_loop(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    """Issue 36: a later loop in the same worktree overwrote `state.json` and `last.json`, and
    the ledger's start event had no prompt: the finished loop's prompt was gone."""
    start(repo, capsys)
    stop(hook, repo, f"All tests pass.\n{PROMISE}")
    argv = ["-C", str(repo), "ralph", "--completion-promise", "SHIPPED", "--session-id", "sess-1"]
    assert cli(capsys, *argv, "Write", "the", "changelog.")[0] == 0
    stop(hook, repo, "Done.\n<promise>SHIPPED</promise>")
    folder = project_dir(repo)
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    assert [(r["prompt"], r["why"]) for r in history] == [
        ("Make the tests pass.", "promise"),
        ("Write the changelog.", "promise"),
    ]
    assert result_of(repo)["prompt"] == "Write the changelog."
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    started = [e["prompt"] for e in events if e["event"] == "ralph.start"]
    assert started == ["Make the tests pass.", "Write the changelog."]


def test_the_iteration_cap_lets_the_session_end(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys, "--max-iterations", "2")
    assert stop(hook, repo).json["decision"] == "block"
    tool(hook, repo)
    result = stop(hook, repo, stop_hook_active=True)
    assert "decision" not in result.json
    assert "iteration limit 2 reached" in result.json["systemMessage"]
    assert state_of(repo)["status"] == "stopped_iteration_limit"
    assert result_of(repo)["why"] == "max_iterations"


def test_unlimited_needs_a_budget(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "-C", str(repo), "ralph", "--max-iterations", "0", "p")
    assert code == 1 and "needs a budget" in out
    assert not active_marker(repo).exists()
    start(repo, capsys, "--max-iterations", "0", "--budget", "3")
    assert state_of(repo)["max_iterations"] == 0


def test_refused_while_a_loop_runs_here(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    start(repo, capsys)
    code, out = cli(capsys, "-C", str(repo), "ralph", "--session-id", "s2", "other")
    assert code == 1 and "a ralph loop is already running here" in out
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "s2", "a", "goal")
    assert code == 1 and "already running" in out
    assert state_of(repo)["goal"] == "Make the tests pass."


def test_corrupt_state_never_blocks(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    (project_dir(repo) / "state.json").write_text("{not json")
    result = stop(hook, repo)
    assert result.code == 0
    assert "decision" not in result.json
    assert "moved aside" in result.json.get("systemMessage", "")
    # Drives nothing, keeps the rails until the user's cancel (or stop).
    assert active_marker(repo).exists()
    code, out = cli(capsys, "-C", str(repo), "cancel")
    assert code == 0 and "rails are off" in out
    assert not active_marker(repo).exists()


# -- peers §3.1: a chain of blocks never wedges the session ------------------------------------


def test_a_chain_without_tool_runs_yields_before_the_host_cap(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    blocks = 0
    active = False
    for _ in range(8):
        result = stop(hook, repo, stop_hook_active=active)
        if result.json.get("decision") != "block":
            break
        blocks, active = blocks + 1, True
    assert blocks == 3 < 8
    assert "ralph stalled" in result.json["systemMessage"]
    assert state_of(repo)["status"] == "paused"
    assert result_of(repo)["why"] == "stalled"


@pytest.mark.parametrize("event", ["PostToolUse", "PostToolUseFailure"])
def test_a_tool_run_between_stops_is_work_not_a_stall(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook, event: str
) -> None:
    start(repo, capsys)
    for _ in range(6):
        assert stop(hook, repo, stop_hook_active=True).json["decision"] == "block"
        tool(hook, repo, event=event)
    assert state_of(repo)["status"] == "running"


# -- peers §3.2: the loop belongs to one session -------------------------------------------------


def test_another_sessions_hooks_are_no_ops(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    before = state_of(repo)
    assert stop(hook, repo, session="sess-2").stdout == ""
    assert tool(hook, repo, session="sess-2").stdout == ""
    assert state_of(repo) == before


@pytest.mark.parametrize("setup_session", [None, "null", ""])
def test_an_unclaimed_loop_is_claimed_by_the_first_typed_prompt_only(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook, setup_session: str | None
) -> None:
    # claude-plugins-official#746 (`session_id` empty at setup), #436 (the string "null").
    start(repo, capsys, session=setup_session)
    assert state_of(repo)["session_id"] is None
    # A Stop never claims: a session the implementer started would get there first.
    assert stop(hook, repo, session="nested").stdout == ""
    assert state_of(repo)["session_id"] is None
    hook("UserPromptSubmit", payload("UserPromptSubmit", repo, session="sess-a", prompt="go"))
    assert state_of(repo)["session_id"] == "sess-a"
    assert stop(hook, repo, session="sess-a").json["decision"] == "block"
    assert state_of(repo)["session_id"] == "sess-a"
    assert stop(hook, repo, session="sess-b").stdout == ""
    assert state_of(repo)["iteration"] == 2


def test_a_hook_without_a_session_owns_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys, session=None)
    data = payload("Stop", repo, last_assistant_message="x")
    del data["session_id"]
    assert hook("Stop", data).stdout == ""
    assert state_of(repo)["session_id"] is None


# -- peers §3.4: cancel cancels ------------------------------------------------------------------


def test_cancel_then_the_next_stop_allows(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    assert stop(hook, repo).json["decision"] == "block"
    code, out = cli(capsys, "-C", str(repo), "cancel")
    assert code == 0 and "cancelled at iteration 2/50" in out
    assert not active_marker(repo).exists()
    assert state_of(repo)["status"] == "stopped"
    assert result_of(repo)["why"] == "cancelled"
    assert stop(hook, repo).stdout == ""
    assert tool(hook, repo).stdout == ""
    assert state_of(repo)["status"] == "stopped"
    code, out = cli(capsys, "-C", str(repo), "cancel")
    assert "nothing to cancel" in out


def test_a_deleted_state_is_not_recreated_by_a_hook(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    # oh-my-claudecode#2085: the hook wrote the state back after the user deleted it.
    start(repo, capsys)
    (project_dir(repo) / "state.json").unlink()
    assert stop(hook, repo).stdout == ""
    assert tool(hook, repo).stdout == ""
    assert not (project_dir(repo) / "state.json").exists()
    # The marker is kept, and with it the rails: `status` says so.
    _, shown = cli(capsys, "-C", str(repo), "status")
    assert "rails of the last one stay on (its state.json is gone)" in shown


def test_cancel_leaves_an_autopilot_loop_to_its_own_stop(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.rounds.hold import hold

    with hold(repo, "g", "run-1", 2):
        code, out = cli(capsys, "-C", str(repo), "cancel")
        assert "a rounds loop, not ralph" in out
        assert active_marker(repo).exists()


# -- peers §3.5: completion is read from the last message, never the transcript ------------------


def test_the_transcript_tail_is_never_read(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook, tmp_path: Path
) -> None:
    # claude-plugins-official#1682: the transcript may not be flushed when Stop fires.
    transcript = tmp_path / "t.jsonl"
    line = {"type": "assistant", "message": {"content": [{"type": "text", "text": PROMISE}]}}
    transcript.write_text(json.dumps(line) + "\n")
    start(repo, capsys)
    result = stop(hook, repo, "Not yet.", transcript_path=str(transcript))
    assert result.json["decision"] == "block"
    assert stop(hook, repo, PROMISE, transcript_path="/nonexistent").json.get("decision") is None


@pytest.mark.parametrize(
    "message", ["", "ALL GREEN", "I will not say <promise>ALL GREEN</promise>."]
)
def test_no_false_completion_through_the_hook(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook, message: str
) -> None:
    # claude-code#30625 (tool_use-only final message), #81827 (bare word), a negated mention.
    start(repo, capsys)
    assert stop(hook, repo, message).json["decision"] == "block"


# -- peers §3.9: compaction never loops ----------------------------------------------------------


def test_a_stop_right_after_compaction_is_let_through(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    assert stop(hook, repo).json["decision"] == "block"
    assert hook("PreCompact", payload("PreCompact", repo, trigger="auto")).stdout == ""
    assert stop(hook, repo, stop_hook_active=True).stdout == ""
    assert state_of(repo)["status"] == "running"
    context = hook("SessionStart", payload("SessionStart", repo, source="compact")).json
    text = context["hookSpecificOutput"]["additionalContext"]
    assert "A ralph loop is running" in text and text.endswith("Make the tests pass.")
    assert stop(hook, repo, stop_hook_active=True).json["decision"] == "block"


def test_a_plain_session_start_injects_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start(repo, capsys)
    assert hook("SessionStart", payload("SessionStart", repo, source="startup")).stdout == ""


def test_refused_while_an_autopilot_loop_runs(
    repo: Path, capsys: pytest.CaptureFixture[str], manager: FakeOpenAI
) -> None:
    from tests.conftest import plan_body

    manager.enqueue(plan_body(1), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "write", "files")
    assert code == 0, out
    code, out = cli(capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "p")
    assert code == 1 and "an autopilot loop is already running here" in out
    assert state_of(repo)["style"] == "autopilot"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--budget", "0", "p"], "--budget 0 is not accepted"),
        (["--max-iterations", "many", "p"], "--max-iterations many is not accepted"),
        (["--max-iterations", "10001", "p"], "a whole number from 0 to 10000"),
        (["--prompt-file", "prompt.md", "also", "words"], "not both"),
        (["--prompt-file", "missing.md"], "cannot read the prompt file"),
    ],
)
def test_a_start_it_cannot_make_is_one_line_and_starts_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    (repo / "prompt.md").write_text("From a file.\n")
    code, out = cli(capsys, "-C", str(repo), "ralph", *argv)
    assert code == 1 and said in out, out
    assert not active_marker(repo).exists()


def test_the_prompt_can_come_from_a_file_but_not_a_huge_one(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "huge.md").write_text("x" * 200_000)
    code, out = cli(capsys, "-C", str(repo), "ralph", "--prompt-file", "huge.md")
    assert code == 1 and "keep it under" in out
    (repo / "prompt.md").write_text("  From a file.\n")
    start(repo, capsys, "--prompt-file", "prompt.md", words=False)
    assert state_of(repo)["goal"] == "From a file."
