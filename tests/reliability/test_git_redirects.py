"""`.git/commondir`: a git directory that holds this file takes its config and hooks from the
folder it names, so writing it (the wall keeps `.git/config` and `.git/hooks` unwritable, not
this) hands every git outside the wall (the user's, a host's own at its next start) a config
of the implementer's: a `core.fsmonitor` there runs as the user, unwalled.

The control shows the user's own git running the planted program; then, through the real hook
commands, the rails deny writing the file and the next session start stops the loop naming it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import Hook, cli, payload, state_of

CANARY = "#!/bin/sh\necho ran >> {log}\n"


def plant(repo: Path, tmp_path: Path) -> Path:
    """A config of the implementer's in the work tree, and `.git/commondir` naming it."""
    ran = tmp_path / "ran.log"
    program = tmp_path / "fsmonitor.sh"
    program.write_text(CANARY.format(log=ran))
    program.chmod(0o755)
    common = repo / "build" / "common"
    shutil.copytree(repo / ".git", common)
    (common / "config").write_text(
        f"[core]\n\trepositoryformatversion = 0\n\tfsmonitor = {program}\n"
    )
    (repo / ".git" / "commondir").write_text("../build/common\n")
    return ran


def test_the_users_git_runs_the_planted_program(repo: Path, tmp_path: Path) -> None:
    """The control: the route is real for a git outside the bridge."""
    ran = plant(repo, tmp_path)
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=False)
    assert ran.exists()


@pytest.fixture
def ralph(repo: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, out = cli(capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "Make it green.")
    assert code == 0, out
    return repo


@pytest.mark.parametrize("name", ["commondir", "config.worktree"])
def test_writing_a_git_redirect_is_denied(ralph: Path, hook: Hook, name: str) -> None:
    target = ralph / ".git" / name
    write = payload(
        "PreToolUse",
        ralph,
        tool_name="Write",
        tool_input={"file_path": str(target), "content": "x"},
    )
    shell = payload(
        "PreToolUse", ralph, tool_name="Bash", tool_input={"command": f"echo ../x > .git/{name}"}
    )
    for data in (write, shell):
        answer: dict[str, Any] = hook("PreToolUse", data).json
        decision = answer.get("hookSpecificOutput", {}).get("permissionDecision")
        assert decision == "deny", (name, data["tool_name"], answer)


def test_a_planted_commondir_stops_the_loop_at_the_next_session_start(
    ralph: Path, hook: Hook, tmp_path: Path
) -> None:
    plant(ralph, tmp_path)
    out = hook("SessionStart", payload("SessionStart", ralph, source="resume")).json
    assert ".git/commondir (added)" in out["systemMessage"]
    assert state_of(ralph)["status"] == "stopped"
    lines = (project_dir(ralph) / "events.jsonl").read_text().splitlines()
    assert any(json.loads(line)["event"] == "hostfiles.changed" for line in lines)
