"""The stop-hook guards users asked for: stall before Claude's cap, deterministic cancel,
state found from any directory, and no spending without a session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import state_home
from tests.conftest import LAUNCHER, edit_payload, payload, review_body, run_launcher, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import (
    Hook,
    answer_of,
    events_of,
    marker_of,
    start_loop,
    state_of,
    state_path,
)
from tests.reviews import wait_reviews

# Claude Code lets a Stop hook block at most this many times in a row, then overrides it.
HOST_BLOCK_CAP = 8


@pytest.fixture
def continuing(planned: Path, manager: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A loop whose manager says continue forever, so only the guards can end a chain."""
    monkeypatch.setenv("AUTOPILOT_CODEX_NO_PROGRESS_LIMIT", "100")
    manager.default = Reply(body=verdict_body("continue"))
    return planned


def chain_of_blocks(hook: Hook, repo: Path, limit: int = 20, *, chained: bool = False) -> int:
    """Stop the way the host does after a block (stop_hook_active) until a stop is allowed."""
    blocked = 0
    for n in range(limit):
        active = chained or n > 0
        out = answer_of(hook("Stop", payload("Stop", repo, stop_hook_active=active)))
        if out.get("decision") != "block":
            return blocked
        blocked += 1
    return blocked


# -- stop_hook_active (peers §3.1) ----------------------------------------------------------


@pytest.mark.parametrize(("setting", "expected"), [(None, 3), ("1", 1), ("7", 7)])
def test_a_chain_of_idle_blocks_pauses_before_the_hosts_cap(
    continuing: Path,
    manager: FakeOpenAI,
    hook: Hook,
    monkeypatch: pytest.MonkeyPatch,
    setting: str | None,
    expected: int,
) -> None:
    if setting is not None:
        monkeypatch.setenv("AUTOPILOT_CODEX_STALL_LIMIT", setting)
    calls = len(manager.requests)
    blocked = chain_of_blocks(hook, continuing)
    assert blocked == expected < HOST_BLOCK_CAP
    state = state_of(continuing)
    assert state["status"] == "paused"
    assert "stalled" in state["stop_reason"]
    # The pausing stop cost nothing: one manager call per block, none for the guard.
    assert len(manager.requests) - calls == blocked


@pytest.mark.parametrize("setting", ["8", "many"])
def test_a_stall_limit_at_or_past_the_hosts_cap_is_refused(
    continuing: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_STALL_LIMIT", setting)
    first = answer_of(hook("Stop", payload("Stop", continuing)))
    assert first["decision"] == "block"
    message = first["systemMessage"]  # said, not silently used
    assert "AUTOPILOT_CODEX_STALL_LIMIT" in message and "using stall_limit=3" in message
    blocked = 1 + chain_of_blocks(hook, continuing, chained=True)
    # The defaults apply as a whole (stall 3, no-progress 3): either ends the chain early.
    assert blocked <= 3 < HOST_BLOCK_CAP
    assert state_of(continuing)["status"] != "running"


def test_blocks_continue_while_the_implementer_works(
    continuing: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    for turn in range(6):
        out = answer_of(hook("Stop", payload("Stop", continuing, stop_hook_active=turn > 0)))
        assert out["decision"] == "block", turn
        hook("PostToolUse", payload("PostToolUse", continuing, tool_name="Bash"))
    assert state_of(continuing)["status"] == "running"
    assert state_of(continuing)["iteration"] == 6


def test_a_new_turn_breaks_the_chain(continuing: Path, hook: Hook) -> None:
    assert chain_of_blocks(hook, continuing, limit=2) == 2
    # The user typed something: Claude Code starts a fresh turn without stop_hook_active.
    assert answer_of(hook("Stop", payload("Stop", continuing)))["decision"] == "block"
    assert state_of(continuing)["idle_stop_blocks"] == 1


# -- cancel (peers §3.4) ----------------------------------------------------------------------


def stop_in_flight(event: str, data: dict[str, Any], tmp: Path) -> subprocess.Popen[bytes]:
    """A hook process, started the way the host starts it, left running in the background."""
    stdin = tmp / f"{event}.json"
    stdin.write_text(json.dumps(data))
    with stdin.open("rb") as handle:
        return subprocess.Popen(
            [str(LAUNCHER), "hook", event, "--host", "claude"],
            stdin=handle,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable},
        )


def wait_for_request(manager: FakeOpenAI, schema: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not manager.requests_for(schema=schema):
        assert time.monotonic() < deadline, "the hook never called the manager"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("event", "schema", "answer"),
    [
        ("Stop", "Verdict", verdict_body("continue")),
        ("Stop", "Verdict", verdict_body("done")),
        ("PostToolUse", "Review", review_body("fix")),
    ],
    ids=["verdict-continue", "verdict-done", "review-fix"],
)
def test_stop_during_a_manager_call_wins(
    planned: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    event: str,
    schema: str,
    answer: dict[str, Any],
) -> None:
    # Out until the user's stop is in (released just after it), however slow the machine.
    released = threading.Event()
    manager.enqueue(Reply(body=answer, hold=released), schema=schema)
    if event == "PostToolUse":
        (planned / "file1.txt").write_text("wrong\n")
        data = edit_payload(planned)
    else:
        data = payload("Stop", planned)
    budget = state_of(planned)["budget_used_usd"]

    proc = stop_in_flight(event, data, tmp_path)
    try:
        wait_for_request(manager, schema)
        assert main(["-C", str(planned), "stop", "the", "user", "said", "stop"]) == 0
        if event == "Stop":  # the hook waits for its answer; a review's worker must not
            released.set()
        capsys.readouterr()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    answer_out = json.loads(out) if out.strip() else {}
    assert "decision" not in answer_out, answer_out  # the late answer cannot block

    # A review runs in a background worker, which leaves as soon as the loop stops.
    state = wait_reviews(planned)
    released.set()
    assert (state["status"], state["stop_reason"]) == ("stopped", "the user said stop")
    assert state["iteration"] == 0 and state["autopilot"]["last_verdict"] is None
    assert state["budget_used_usd"] > budget  # the discarded call was still paid for
    last = ".discarded" if event == "Stop" else "review.abandoned"
    assert events_of(planned)[-1]["event"].endswith(last)
    # Nothing recreates the loop afterwards, and every hook is a silent no-op.
    assert not marker_of(planned).exists()
    calls = len(manager.requests)
    for late_event in ("Stop", "PostToolUse", "PreCompact"):
        late = run_launcher(
            ["hook", late_event, "--host", "claude"],
            json.dumps(payload(late_event, planned)).encode(),
        )
        assert (late.code, late.stdout) == (0, "")
    assert len(manager.requests) == calls
    assert state_of(planned)["status"] == "stopped"


# -- paths (peers §3.10) ----------------------------------------------------------------------


def test_the_loop_is_found_from_any_directory(
    planned: Path, hook: Hook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = planned / "src" / "pkg" / "deep"
    deep.mkdir(parents=True)
    link = tmp_path / "link-to-repo"
    link.symlink_to(planned, target_is_directory=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    monkeypatch.chdir(elsewhere)  # the hook process runs somewhere else entirely
    for cwd in (planned, deep, link, link / "src" / "pkg"):
        hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Read"))
    # No cwd in the payload: the process's own directory decides.
    monkeypatch.chdir(deep)
    no_cwd = payload("PostToolUse", planned, tool_name="Read")
    del no_cwd["cwd"]
    hook("PostToolUse", no_cwd)
    # And through the launcher, started in a subdirectory.
    result = run_launcher(
        ["hook", "PostToolUse", "--host", "claude"],
        json.dumps(payload("PostToolUse", deep, tool_name="Read")).encode(),
        cwd=deep,
    )
    assert result.code == 0, result.stderr

    assert state_of(planned)["tool_events"] == 6
    assert len(list((state_home() / "projects").iterdir())) == 1  # one loop, one place
    assert not (deep / ".autopilot-codex").exists()


# -- missing session (peers §3.2) -------------------------------------------------------------


@pytest.mark.parametrize("claimed", [True, False], ids=["owned", "unclaimed"])
def test_a_hook_without_a_session_never_spends(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str], claimed: bool
) -> None:
    start_loop(repo, manager, capsys, session="sess-1" if claimed else None)
    manager.default = Reply(body=verdict_body("continue"))
    (repo / "file1.txt").write_text("work\n")  # a diff that a review would be paid for
    before = state_path(repo).read_bytes()
    calls = len(manager.requests)
    for session in (None, "", 0, 123, ["sess-1"], {"id": "sess-1"}, True):
        for event, data in (
            ("Stop", payload("Stop", repo)),
            ("PostToolUse", edit_payload(repo)),
            ("PreCompact", payload("PreCompact", repo)),
            ("SessionStart", payload("SessionStart", repo, source="compact")),
        ):
            if session is None:
                del data["session_id"]
            else:
                data["session_id"] = session
            result = hook(event, data)
            assert (result.code, result.stdout) == (0, ""), (event, session)
    assert len(manager.requests) == calls
    assert state_path(repo).read_bytes() == before  # nothing claimed, counted or charged


def test_a_read_without_the_lock_torn_by_a_stop_is_not_taken_for_tampering(
    planned: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A background review's watcher reads the state without the lock. A user's stop landing
    between its read of state.json and its read of the marker made the marker look changed
    outside the bridge: the watcher stopped the loop as tampered, over the user's own stop."""
    from autopilot_codex.store import Store
    from autopilot_codex.store.load import Store as Loading

    real = Loading._check_marker_and_ledger
    stops: list[int] = []

    def stop_lands_here(self: Loading, key: bytes) -> None:
        if not stops:
            stops.append(1)
            assert main(["-C", str(planned), "stop", "the", "user", "said", "stop"]) == 0
        real(self, key)

    monkeypatch.setattr(Loading, "_check_marker_and_ledger", stop_lands_here)
    state = Store(planned).load(with_plan=False)  # no lock, as the watcher reads
    capsys.readouterr()
    assert state is not None and (state.status, state.stop_reason) == (
        "stopped",
        "the user said stop",
    )
    on_disk = state_of(planned)
    assert (on_disk["status"], on_disk["stop_reason"]) == ("stopped", "the user said stop")
    assert not [e for e in events_of(planned) if e["event"] == "state.tampered"]
