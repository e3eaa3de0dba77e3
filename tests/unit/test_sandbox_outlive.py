"""The bound on a walled git that outlives the bridge, and what a lock in the way reads as."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.gitbinary import system_program
from autopilot_codex.gitrepo.runner import run_bytes
from autopilot_codex.sandbox import outlive
from tests.conftest import make_repo


def test_a_planted_timeout_is_never_used(tmp_path: Path) -> None:
    planted = tmp_path / "timeout"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o777)
    assert system_program((str(planted),)) is None


def test_without_a_trusted_timeout_the_command_is_run_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(outlive, "PLACES", ("/nowhere/timeout",))
    assert outlive.bounded(["git", "status"], 60) == ["git", "status"]


@pytest.mark.skipif(system_program(outlive.PLACES) is None, reason="no trusted timeout here")
def test_the_bound_comes_after_the_bridge_s_own_limit() -> None:
    command = outlive.bounded(["git", "status"], 60)
    assert command[1:] == ["--signal=KILL", str(60 + outlive.GRACE_S), "git", "status"]


def test_a_lock_in_the_way_is_named(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / ".git" / "refs" / "heads" / "x.lock").write_text("")
    with pytest.raises(BridgeError) as caught:
        run_bytes(repo, "update-ref", "refs/heads/x", sha)
    said = str(caught.value)
    assert "refs/heads/x.lock" in said and "remove that file" in said, said
