"""Fail closed on the bridge's own errors (issue 33): in a walled loop a hook that crashed
never answers allow. A PreToolUse is denied and a Stop blocked, the crash named in one line;
after `STOP_LIMIT` crash blocks in a row the loop pauses and the Stop goes through, so no
session is wedged. An unguarded loop keeps the non-blocking answer."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import failclosed, hookrun
from autopilot_codex.cli import main
from tests.conftest import HookRun, edit_state, payload, plan_body, state_of
from tests.fakes.openai_server import FakeOpenAI

EVENTS = ("PreToolUse", "PostToolUse", "Stop", "SessionStart", "PreCompact", "UserPromptSubmit")
CRASH = "autopilot-codex: internal error in the {event} hook (RuntimeError: bad b'\\xff' name)"


@pytest.fixture
def loop(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> Path:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    capsys.readouterr()
    return repo


def run(
    event: str,
    repo: Path,
    host: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    **extra: Any,
) -> HookRun:
    """`autopilot-codex hook EVENT --host HOST` in this process, as the launcher runs it."""
    from autopilot_codex.__main__ import run as entry

    data = payload(event, repo, **extra)
    raw = json.dumps(data).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    monkeypatch.setattr(sys, "argv", ["autopilot-codex", "hook", event, "--host", host])
    capsys.readouterr()
    code = entry()
    out = capsys.readouterr()
    return HookRun(code, out.out, out.err)


def crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """An internal error wherever the engine answers (the seam every event goes through)."""

    def broken(*_: object) -> object:
        raise RuntimeError("bad b'\\xff'\nname")

    monkeypatch.setattr(hookrun, "_dispatch", broken)


def tool(event: str) -> dict[str, Any]:
    if event in ("PreToolUse", "PostToolUse"):
        return {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    return {}


@pytest.mark.parametrize("host", ["claude", "codex"])
@pytest.mark.parametrize("event", EVENTS)
def test_a_crash_in_a_walled_loop_never_answers_allow(
    loop: Path,
    host: str,
    event: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edit_state(loop, wall="on")
    crash(monkeypatch)
    if event == "UserPromptSubmit":
        edit_state(loop, session_id=None)  # only an unowned loop hears a prompt
    result = run(event, loop, host, capsys, monkeypatch, **tool(event))
    what = CRASH.format(event=event)
    assert result.code == 0
    assert result.stderr.startswith(what + "; details in "), result.stderr
    assert result.stderr.count("\n") == 1
    answer = result.json
    log = result.stderr.strip().removeprefix(what + "; details in ")
    named = f"{what}; details in {log}"
    if event == "PreToolUse":
        assert answer == {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"{named}. This call is denied: the loop is "
                "guarded and its supervisor could not judge it.",
            }
        }
    elif event == "Stop":
        assert answer == {
            "decision": "block",
            "reason": f"{named}. This Stop is blocked (1 of 3): the loop is guarded and its "
            "supervisor could not judge the turn; end the turn again.",
        }
    else:
        # Nothing to gate (the Stop judges the turn): the crash is shown, nothing blocked.
        assert answer == {"systemMessage": named}
    assert state_of(loop)["status"] == "running"


def stop(loop: Path, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch) -> HookRun:
    return run("Stop", loop, "claude", capsys, mp, stop_hook_active=True)


def test_crash_blocks_of_a_stop_end_in_a_pause_and_never_wedge_the_session(
    loop: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    edit_state(loop, wall="on")
    crash(monkeypatch)
    reasons = [stop(loop, capsys, monkeypatch).json.get("reason", "") for _ in range(3)]
    assert [f"This Stop is blocked ({n} of 3)" in r for n, r in enumerate(reasons, 1)] == [True] * 3
    fourth = stop(loop, capsys, monkeypatch)
    assert fourth.code == 0
    answer = fourth.json
    message = answer.pop("systemMessage")
    assert answer == {}  # let through
    assert message.endswith(
        ". The loop is paused: 3 Stops in a row the supervisor could not judge; "
        "`autopilot-codex resume` after a fix. The safety rails stay on until "
        "`autopilot-codex stop`."
    ), message
    state = state_of(loop)
    assert (state["status"], state["stop_reason"]) == (
        "paused",
        "3 Stops in a row the supervisor could not judge",
    )
    # A paused loop's Stop gates nothing: another crash there passes at once.
    assert (
        stop(loop, capsys, monkeypatch)
        .json["systemMessage"]
        .endswith(". The loop is not running: the Stop is let through.")
    )
    # Resumed, the loop's next crash starts a new count.
    edit_state(loop, status="running")
    assert "This Stop is blocked (1 of 3)" in stop(loop, capsys, monkeypatch).json["reason"]


def test_a_stop_answered_between_crashes_starts_the_count_again(
    loop: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edit_state(loop, wall="on")
    with monkeypatch.context() as mp:
        crash(mp)
        assert "(1 of 3)" in stop(loop, capsys, mp).json["reason"]
        assert "(2 of 3)" in stop(loop, capsys, mp).json["reason"]
    edit_state(loop, status="stopped", stop_reason="by the user")
    assert stop(loop, capsys, monkeypatch).stdout == ""  # answered: a stopped loop lets go
    edit_state(loop, status="running")
    crash(monkeypatch)
    assert "(1 of 3)" in stop(loop, capsys, monkeypatch).json["reason"]


@pytest.mark.parametrize("wall", ["partly", "off", ""])
@pytest.mark.parametrize("event", ["PreToolUse", "Stop"])
def test_an_unguarded_loop_keeps_the_non_blocking_answer(
    loop: Path,
    wall: str,
    event: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edit_state(loop, wall=wall)
    crash(monkeypatch)
    result = run(event, loop, "claude", capsys, monkeypatch, **tool(event))
    assert (result.code, result.stdout) == (0, "")
    assert result.stderr.startswith(CRASH.format(event=event) + "; details in ")


def test_a_state_that_cannot_say_whether_it_was_walled_reads_as_walled(loop: Path) -> None:
    from autopilot_codex.paths import project_dir

    path = project_dir(loop) / "state.json"
    for text in (b"{not json", b"[]", b'{"wall": 3}'):
        path.write_bytes(text)
        assert failclosed.walled(str(loop))
    path.write_bytes(b'{"wall": "partly"}')
    assert not failclosed.walled(str(loop))
    path.unlink()
    assert failclosed.walled(str(loop))


def test_a_bridge_error_in_a_walled_loop_denies_too(
    loop: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex.errors import BridgeError

    edit_state(loop, wall="on")

    def refused(*_: object) -> object:
        raise BridgeError("state.lock is held\nby another process")

    monkeypatch.setattr(hookrun, "_dispatch", refused)
    result = run("PreToolUse", loop, "claude", capsys, monkeypatch, **tool("PreToolUse"))
    assert result.json["hookSpecificOutput"]["permissionDecisionReason"] == (
        "autopilot-codex: state.lock is held by another process. This call is denied: the "
        "loop is guarded and its supervisor could not judge it."
    )


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_git_refusing_a_corrupt_state_field_blocks_the_stop_of_a_walled_loop(
    loop: Path,
    host: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real bad input, no seam: a base the bridge hands git that git refuses. Before, the
    error was a message on an allowed Stop: the turn ended unjudged."""
    edit_state(loop, wall="on", base_sha="-x")
    (loop / "f.txt").write_text("x\n")
    result = run("Stop", loop, host, capsys, monkeypatch)
    assert result.code == 0
    answer = result.json
    assert answer.get("decision") == "block", answer
    reason = answer["reason"]
    assert reason.startswith(f"autopilot-codex: git log failed in {loop}: ")  # git's own words
    assert reason.endswith(
        ". This Stop is blocked (1 of 3): the loop is guarded and its supervisor could not "
        "judge the turn; end the turn again."
    )
    assert "\n" not in reason
    edit_state(loop, wall="partly")
    assert run("Stop", loop, host, capsys, monkeypatch).json.get("decision") is None
