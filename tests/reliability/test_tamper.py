"""Tamper evidence: a state or plan file the bridge did not write stops the loop, is kept aside,
and nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path

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
