"""Tamper evidence: a state or plan file the bridge did not write stops the loop, is kept aside,
and nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.paths import active_marker, project_dir, rails_marker
from tests.conftest import edit_payload, payload, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import Hook, events_of, state_of, state_path


def bash_payload(cwd: Path, command: str) -> dict[str, object]:
    return payload("PreToolUse", cwd, tool_name="Bash", tool_input={"command": command})


def test_a_state_edited_under_a_running_loop_stops_it_at_the_next_hook(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    path = state_path(planned)
    data = json.loads(path.read_text())
    data["budget_usd"] = 999.0  # the implementer raising its own budget
    edited = json.dumps(data)
    path.write_text(edited)

    out = hook("Stop", payload("Stop", planned)).json
    assert "decision" not in out  # never a block
    assert "changed outside the bridge" in out["systemMessage"]
    state = state_of(planned)
    assert state["status"] == "stopped" and "changed outside the bridge" in state["stop_reason"]
    assert state["budget_usd"] == 5.0  # the bridge's own values, not the edit
    kept = list(project_dir(planned).glob("state.json.changed-*"))
    assert len(kept) == 1 and kept[0].read_text() == edited
    # Fail closed: a loop stopped by tamper evidence keeps its rails until the user's stop.
    assert active_marker(planned).exists() and rails_marker(planned).exists()
    assert manager.requests_for(schema="Verdict") == []
    assert "state.tampered" in [e["event"] for e in events_of(planned)]
    # Stopped means stopped: the next hook is a no-op.
    assert hook("Stop", payload("Stop", planned)).stdout == ""


def test_a_replaced_plan_stops_the_loop_and_the_bridge_plan_comes_back(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    plan = project_dir(planned) / "plan.json"
    original = plan.read_text()
    data = json.loads(original)
    data["tasks"] = data["tasks"][:1]
    data["tasks"][0]["acceptance"] = ["anything goes"]
    plan.write_text(json.dumps(data))
    manager.enqueue(verdict_body("continue"), schema="Verdict")

    out = hook("Stop", payload("Stop", planned)).json
    assert "plan.json was changed outside the bridge" in out["systemMessage"]
    assert state_of(planned)["status"] == "stopped"
    assert plan.read_text() == original
    assert len(list(project_dir(planned).glob("plan.json.changed-*"))) == 1


def test_a_state_removed_while_running_drives_nothing_but_keeps_the_rails(
    planned: Path, hook: Hook
) -> None:
    state_path(planned).unlink()
    assert hook("PostToolUse", edit_payload(planned)).stdout == ""
    assert not state_path(planned).exists()
    # Removing a file never switches the rails off (it used to): only the user's stop does.
    assert active_marker(planned).exists()
    denied = hook("PreToolUse", bash_payload(planned, "git push --force origin main")).json
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    hook("PostToolUse", edit_payload(planned))
    assert [e["event"] for e in events_of(planned)].count("state.removed") == 1


def test_the_bridge_own_writes_are_never_taken_for_tampering(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    for _ in range(2):
        manager.enqueue(verdict_body("continue"), schema="Verdict")
        hook("PostToolUse", payload("PostToolUse", planned, tool_name="Read"))
        assert "decision" in hook("Stop", payload("Stop", planned, stop_hook_active=True)).json
    assert state_of(planned)["status"] == "running"


# -- the keyed witness: a forged witness, a missing one, a damaged one --------------------------


def _forge_unkeyed(planned: Path, **changes: object) -> str:
    """The implementer's best forgery without the key: state and witness rewritten together,
    the witness's digests made to match (sha256 is public), in the new format and the old."""
    import hashlib

    path = state_path(planned)
    data = json.loads(path.read_text())
    data.update(changes)
    edited = json.dumps(data)
    path.write_text(edited)
    sha = hashlib.sha256(edited.encode()).hexdigest()
    witness_file = path.with_name("witness.json")
    seen = json.loads(witness_file.read_text())
    seen.update(states=[sha], last=edited)
    seen["mac"] = hashlib.sha256(json.dumps(seen).encode()).hexdigest()
    witness_file.write_text(json.dumps(seen))
    return edited


def _assert_forgery_refused(planned: Path, hook: Hook) -> None:
    out = hook("Stop", payload("Stop", planned)).json
    assert "decision" not in out  # never a block
    message = out.get("systemMessage", "")
    assert not message or "outside the bridge" in message or "not vouched" in message
    assert "state.tampered" in [e["event"] for e in events_of(planned)]
    # Whatever a later hook or command loads, the forged budget never comes back.
    hook("Stop", payload("Stop", planned))
    state = _loaded(planned)
    assert state is None or (state.budget_usd == 5.0 and state.status != "running")
    assert state_path(planned).exists() is False or state_of(planned)["budget_usd"] == 5.0


def _loaded(planned: Path) -> Any:
    from autopilot_codex.errors import StateCorrupt
    from autopilot_codex.store import Store

    try:
        return Store(planned).load()
    except StateCorrupt:
        return None


def test_state_and_witness_rewritten_together_without_the_key_is_tampering(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    _forge_unkeyed(planned, budget_usd=9999.0)
    _assert_forgery_refused(planned, hook)
    assert manager.requests_for(schema="Verdict") == []


def test_an_old_format_witness_written_with_a_forged_state_is_tampering(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    import hashlib

    path = state_path(planned)
    data = json.loads(path.read_text())
    data["budget_usd"] = 9999.0
    edited = json.dumps(data)
    path.write_text(edited)
    # The previous release's witness: no seal at all.
    old = {"states": [hashlib.sha256(edited.encode()).hexdigest()], "plan": "", "last": edited}
    path.with_name("witness.json").write_text(json.dumps(old))
    _assert_forgery_refused(planned, hook)


def test_a_deleted_witness_is_tampering_never_no_witness(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    # The state is left as the bridge wrote it: without its witness it is still not trusted.
    state_path(planned).with_name("witness.json").unlink()
    out = hook("Stop", payload("Stop", planned)).json
    assert "witness.json is missing" in out["systemMessage"]
    assert "state.tampered" in [e["event"] for e in events_of(planned)]
    assert manager.requests_for(schema="Verdict") == []


def test_a_witness_damaged_first_then_the_state_edited_is_tampering(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    path = state_path(planned)
    witness_file = path.with_name("witness.json")
    witness_file.write_text("{ damaged")
    # The damage alone is tampering: the state is no longer trusted, at the very next hook.
    out = hook("PostToolUse", payload("PostToolUse", planned, tool_name="Read")).json
    assert "witness.json is not valid JSON" in out["systemMessage"]
    assert "state.tampered" in [e["event"] for e in events_of(planned)]
    assert not path.exists()
    # The implementer puts an edited state back: still not trusted, never running again.
    aside = next(project_dir(planned).glob("state.json.corrupt-*"))
    data = json.loads(aside.read_text())
    data["budget_usd"] = 9999.0
    path.write_text(json.dumps(data))
    _assert_forgery_refused(planned, hook)


def test_a_witness_with_a_forged_last_state_never_restores_it(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    """The witness's copy of the last state is what a tampered loop is restored from."""
    witness_file = state_path(planned).with_name("witness.json")
    seen = json.loads(witness_file.read_text())
    last = json.loads(seen["last"])
    last["budget_usd"] = 9999.0
    seen["last"] = json.dumps(last)
    witness_file.write_text(json.dumps(seen))
    data = state_of(planned)
    data["iteration"] = 0
    state_path(planned).write_text(json.dumps(data) + " ")
    _assert_forgery_refused(planned, hook)


def test_a_removed_key_makes_every_sealed_loop_tampered_never_adopted(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    from autopilot_codex.paths import state_home
    from autopilot_codex.witness_key import key_path

    key_path(state_home()).unlink()
    _forge_unkeyed(planned, budget_usd=9999.0)
    _assert_forgery_refused(planned, hook)


def test_the_key_is_the_user_s_alone(planned: Path) -> None:
    from autopilot_codex.paths import state_home
    from autopilot_codex.witness_key import key_path

    path = key_path(state_home())
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    # Never in the loop's files, the ledger or the witness.
    secret = json.loads(path.read_text())["key"]
    for name in ("state.json", "witness.json", "events.jsonl", "plan.json"):
        assert secret not in (project_dir(planned) / name).read_text()


# -- the ledger: append-only, sealed and chained -------------------------------------------------


def test_a_truncated_ledger_is_noticed(planned: Path, manager: FakeOpenAI, hook: Hook) -> None:
    ledger = project_dir(planned) / "events.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    assert lines
    ledger.write_text("".join(lines[:-1]))
    out = hook("Stop", payload("Stop", planned)).json
    assert "events.jsonl was cut short" in out["systemMessage"]
    assert state_of(planned)["status"] == "stopped"
    # The cut ledger is kept aside; the new one starts with the event that says so.
    assert len(list(project_dir(planned).glob("events.jsonl.changed-*"))) == 1
    assert [e["event"] for e in events_of(planned)][0] == "state.tampered"
    assert manager.requests_for(schema="Verdict") == []


def test_an_emptied_or_removed_ledger_is_noticed(planned: Path, hook: Hook) -> None:
    ledger = project_dir(planned) / "events.jsonl"
    ledger.unlink()
    out = hook("Stop", payload("Stop", planned)).json
    assert "events.jsonl was removed" in out["systemMessage"]
    assert state_of(planned)["status"] == "stopped"


def test_a_rewritten_ledger_line_is_noticed(planned: Path, hook: Hook) -> None:
    ledger = project_dir(planned) / "events.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    record = json.loads(lines[-1])
    record["event"] = "nothing.happened"
    lines[-1] = json.dumps(record) + "\n"  # its old seal kept, its text changed
    ledger.write_text("".join(lines))
    out = hook("Stop", payload("Stop", planned)).json
    assert "events.jsonl was rewritten" in out["systemMessage"]


def test_a_forged_appended_line_is_noticed(planned: Path, manager: FakeOpenAI, hook: Hook) -> None:
    ledger = project_dir(planned) / "events.jsonl"
    forged = {"ts": "2026-01-01T00:00:00+00:00", "event": "caps", "budget_usd": 9999.0}
    with ledger.open("a") as handle:
        handle.write(json.dumps({**forged, "mac": "0" * 64}) + "\n")
    out = hook("Stop", payload("Stop", planned)).json
    assert "a line the bridge did not write" in out["systemMessage"]
    assert state_of(planned)["status"] == "stopped"
    assert manager.requests_for(schema="Verdict") == []


def test_a_forged_line_is_never_laundered_by_the_bridge_s_next_writes(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    """The bridge appends after the forged line and saves its state: the forgery still shows."""
    from autopilot_codex.store import Store

    ledger = project_dir(planned) / "events.jsonl"
    with ledger.open("a") as handle:
        handle.write(json.dumps({"ts": "x", "event": "forged"}) + "\n")
    store = Store(planned)
    store.append_event("bridge.note")
    # A save anchors the ledger only where it verifiably ends: before the forged line.
    with store.locked():
        seen = json.loads(store.witness_path.read_text())
        state = json.loads(store.state_path.read_text())
    from autopilot_codex.state_ranges import parse_state

    store.save(parse_state(state))
    assert (
        json.loads(store.witness_path.read_text())["ledger"]["size"]
        <= seen["ledger"]["size"] + 10**6
    )
    out = hook("Stop", payload("Stop", planned)).json
    assert "a line the bridge did not write" in out["systemMessage"]


def test_the_bridge_s_own_appends_from_parallel_processes_chain_in_turn(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from autopilot_codex.store import Store; "
        "s = Store(Path(sys.argv[1])); [s.append_event('burst', n=i) for i in range(40)]"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(planned)]) for _ in range(4)]
    assert all(p.wait() == 0 for p in procs)
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    hook("PostToolUse", payload("PostToolUse", planned, tool_name="Read"))
    out = hook("Stop", payload("Stop", planned, stop_hook_active=True)).json
    assert "outside the bridge" not in out.get("systemMessage", "")
    assert state_of(planned)["status"] == "running"
    assert sum(e["event"] == "burst" for e in events_of(planned)) == 160


# -- the active marker ---------------------------------------------------------------------------


def test_an_edited_marker_is_noticed_at_the_next_load(planned: Path, hook: Hook) -> None:
    from autopilot_codex.errors import StateCorrupt
    from autopilot_codex.store import Store

    marker = active_marker(planned)
    data = json.loads(marker.read_text())
    data["session_id"] = "someone-else"  # the real session's hooks would be skipped
    marker.write_text(json.dumps(data) + "\n")
    try:
        Store(planned).load()
    except StateCorrupt as exc:
        assert "the active marker was changed" in str(exc)
    else:
        raise AssertionError("an edited marker was trusted")
    assert state_of(planned)["status"] == "stopped"
    assert list(project_dir(planned).glob("marker.changed-*"))
    assert not list(marker.parent.glob("*.changed-*"))  # never left where the gate reads


def test_a_removed_marker_is_noticed_at_the_next_load(planned: Path) -> None:
    from autopilot_codex.errors import StateCorrupt
    from autopilot_codex.store import Store

    active_marker(planned).unlink()
    try:
        Store(planned).load()
    except StateCorrupt as exc:
        assert "the active marker was changed" in str(exc)
    else:
        raise AssertionError("a removed marker went unnoticed")
    assert state_of(planned)["status"] == "stopped"
    assert "state.tampered" in [e["event"] for e in events_of(planned)]


def test_the_rails_keep_the_implementer_s_tools_off_the_key(planned: Path, hook: Hook) -> None:
    """Until the wall makes it unreadable, the `state` rail denies every tool the key file."""
    from autopilot_codex.paths import state_home
    from autopilot_codex.witness_key import key_path

    key = str(key_path(state_home()))
    calls: list[dict[str, Any]] = [
        {"tool_name": "Read", "tool_input": {"file_path": key}},
        {"tool_name": "Bash", "tool_input": {"command": f"cat {key}"}},
        {"tool_name": "Bash", "tool_input": {"command": f"cp {key} /tmp/k"}},
        {"tool_name": "Write", "tool_input": {"file_path": key, "content": "{}"}},
        {"tool_name": "Bash", "tool_input": {"command": f"cat {state_home()}*/secret/*"}},
        {"tool_name": "Bash", "tool_input": {"command": f"grep -r . {state_home()}"}},
    ]
    for call in calls:
        out = hook("PreToolUse", payload("PreToolUse", planned, **call)).json
        specific = out.get("hookSpecificOutput", {})
        assert specific.get("permissionDecision") == "deny", call


def test_a_marker_edited_to_admit_every_session_is_noticed_at_the_next_hook(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    marker = active_marker(planned)
    data = json.loads(marker.read_text())
    data["owner"] = "driver"  # every session's hooks admitted, as for a rounds run
    marker.write_text(json.dumps(data) + "\n")
    out = hook("Stop", payload("Stop", planned, session="another-session")).json
    assert "the active marker was changed" in out["systemMessage"]
    assert state_of(planned)["status"] == "stopped"
    assert list(project_dir(planned).glob("marker.changed-*"))
    assert manager.requests_for(schema="Verdict") == []


def test_a_line_rewritten_before_the_last_anchor_is_caught_by_the_user_s_resume(
    planned: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hooks check what was appended since the last anchor; `resume` checks all of it."""
    from autopilot_codex.cli import main

    ledger = project_dir(planned) / "events.jsonl"
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    hook("Stop", payload("Stop", planned))  # more lines, and the anchor moves past them
    lines = ledger.read_text().splitlines(keepends=True)
    assert len(lines) >= 2
    # The plan's tokens, rewritten to the same length, its old seal kept.
    assert '"tokens_in": 1000' in lines[0]
    lines[0] = lines[0].replace('"tokens_in": 1000', '"tokens_in": 9999')
    ledger.write_text("".join(lines))
    # A hook does not read history before the anchor (that would cost every hook) ...
    hook("PostToolUse", payload("PostToolUse", planned, tool_name="Read"))
    # ... the user's resume does.
    code = main(["-C", str(planned), "resume"])
    out = capsys.readouterr()
    assert code != 0 and "events.jsonl was rewritten" in out.out + out.err
    assert state_of(planned)["status"] == "stopped"
    assert len(list(project_dir(planned).glob("events.jsonl.changed-*"))) == 1
    # The history kept aside, the new ledger starts clean: the next resume goes on.
    assert main(["-C", str(planned), "resume"]) == 0
    assert state_of(planned)["status"] == "running"


def test_a_plan_and_its_backup_edited_together_never_come_back_as_the_plan(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    plan = project_dir(planned) / "plan.json"
    original = plan.read_text()
    data = json.loads(original)
    data["tasks"][0]["acceptance"] = ["anything goes"]
    forged = json.dumps(data)
    plan.write_text(forged)
    plan.with_name("plan.json.bridge").write_text(forged)
    out = hook("Stop", payload("Stop", planned)).json
    assert "plan.json was changed outside the bridge" in out["systemMessage"]
    assert state_of(planned)["status"] == "stopped"
    assert not plan.exists() or plan.read_text() != forged
    assert manager.requests_for(schema="Verdict") == []


def test_an_older_state_and_witness_put_back_together_are_given_away_by_the_ledger(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    """A copy of the pair the bridge once wrote (less budget spent) is replayed later."""
    path = state_path(planned)
    witness_file = path.with_name("witness.json")
    old_state, old_witness = path.read_text(), witness_file.read_text()
    for _ in range(2):
        manager.enqueue(verdict_body("continue"), schema="Verdict")
        hook("PostToolUse", payload("PostToolUse", planned, tool_name="Read"))
        hook("Stop", payload("Stop", planned, stop_hook_active=True))
    spent = state_of(planned)["budget_used_usd"]
    assert spent > json.loads(old_state)["budget_used_usd"]
    path.write_text(old_state)
    witness_file.write_text(old_witness)
    out = hook("Stop", payload("Stop", planned)).json
    assert "an earlier copy was put back" in out["systemMessage"]
    assert state_of(planned)["status"] == "stopped"
    assert state_of(planned)["budget_used_usd"] >= spent  # what the sealed ledger says
    # Settled: the next look finds nothing more (the witness is newer than every line now).
    from autopilot_codex.store import Store

    assert Store(planned).load() is not None
    assert [e["event"] for e in events_of(planned)].count("state.tampered") == 1
