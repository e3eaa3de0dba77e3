"""A worker's workspace: where its folders are, and what a push says."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.fleet import workflow, workspace
from autopilot_codex.fleet.workspace import _outcomes, _remote_name
from tests.conftest import git, make_repo


def test_the_clone_is_beside_the_state_home_and_the_rest_in_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    space = workspace.of("host/1", "f123", home)
    assert space.private == home / "fleet" / "host_1" / "f123"
    assert space.clone == tmp_path / "home-fleet" / "host_1" / "f123" / "repo"
    with pytest.raises(BridgeError):
        workspace.of("..", "f1", home)


def test_a_run_branch_is_pushed_under_the_fleet_runs_name() -> None:
    assert (
        _remote_name("refs/heads/autopilot/lanes-1/task/T1", "f9")
        == "refs/heads/autopilot/f9/task/T1"
    )
    assert (
        _remote_name("refs/heads/autopilot/lanes-1/integration", "f9")
        == "refs/heads/autopilot/f9/integration"
    )
    assert _remote_name("refs/heads/autopilot/odd", "f9") == "refs/heads/autopilot/f9/odd"


def test_a_push_says_what_happened_to_each_branch() -> None:
    porcelain = (
        "To /r.git\n"
        "*\trefs/heads/autopilot/a:refs/heads/autopilot/f/a\t[new branch]\n"
        "=\trefs/heads/autopilot/b:refs/heads/autopilot/f/b\t[up to date]\n"
        "!\trefs/heads/autopilot/c:refs/heads/autopilot/f/c\t[rejected]\t(non-fast-forward)\n"
        "Done\n"
    )
    assert _outcomes(porcelain, [], "") == {
        "autopilot/f/a": "pushed",
        "autopilot/f/b": "up to date",
        "autopilot/f/c": "refused ((non-fast-forward))",
    }
    assert _outcomes("", ["refs/heads/autopilot/f/a"], "fatal: no remote\n") == {
        "autopilot/f/a": "not pushed (fatal: no remote)"
    }


def test_a_clone_is_made_once_and_a_run_without_branches_pushes_nothing(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "source")
    space = workspace.of("w", "f1", tmp_path / "home")
    env = dict(os.environ)
    clone = workspace.prepare(space, source.as_uri(), "f1", env)
    (clone / "mine.txt").write_text("kept\n")
    assert workspace.prepare(space, source.as_uri(), "f1", env) == clone
    assert (clone / "mine.txt").exists()
    assert workspace.push(space, source.as_uri(), "f1", env) == {}
    git(clone, "branch", "autopilot/lanes-1/integration")
    assert workspace.push(space, source.as_uri(), "f1", env) == {
        "autopilot/f1/integration": "pushed"
    }
    with pytest.raises(BridgeError, match="git clone failed"):
        workspace.prepare(
            workspace.of("w", "f2", tmp_path / "home"), str(tmp_path / "none"), "f2", env
        )


def test_a_fleet_step_runs_only_in_a_worker() -> None:
    workflow._worker.clear()
    with pytest.raises(BridgeError, match="runs only in `autopilot-codex worker`"):
        workflow.this_worker()


def test_a_drive_step_run_again_after_its_run_ended_returns_that_run(
    tmp_path: Path, isolated: Path
) -> None:
    """The worker died between the run's end and the step's checkpoint: recovered, the step
    finds the ended run in its clone (this fleet run's alone) and runs nothing again."""
    import math

    from autopilot_codex.fleet.spec import RunSpec
    from autopilot_codex.lanes.budget import Amount, Budget
    from autopilot_codex.lanes.driver import home_of
    from autopilot_codex.lanes.record import LanesRun, save

    spec = RunSpec("file:///nowhere", ("g",), "g", None, fleet_id="f1")
    workflow.serve_as(workflow.Worker("w"))
    space = workspace.of("w", "f1")
    clone = make_repo(space.clone)
    space.private.mkdir(parents=True)
    (space.private / ".fleet-ready").write_text("made\n")
    ended = LanesRun(
        run="lanes-1", goal="g", implementer="claude", manager="openai", lanes=1,
        user_branch="main", user_sha=git(clone, "rev-parse", "main"),
        budget=Budget(Amount(1.0, math.inf, math.inf)), status="incomplete", why="not merged: T1",
    )  # fmt: skip
    save(home_of(clone), ended)
    try:
        driven = workflow.drive(spec.as_dict(), str(clone))
    finally:
        workflow._worker.clear()
    assert (driven["exit_code"], driven["record"]["status"]) == (2, "incomplete")
    assert driven["record"]["why"] == "not merged: T1"


def test_no_git_of_the_worker_reads_the_clone_with_its_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The implementer can write the clone's `.git/config`: a git that reads it (as a fetch
    from the clone does, through an upload-pack there) runs walled, never with the worker's
    environment. A git wrapper records each call's environment and arguments."""
    source = make_repo(tmp_path / "source")
    space = workspace.of("w", "f1", tmp_path / "home")
    clone = workspace.prepare(space, source.as_uri(), "f1", dict(os.environ))
    git(clone, "branch", "autopilot/lanes-1/integration")
    calls = tmp_path / "calls"
    calls.mkdir()
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    real = shutil.which("git", path="/usr/bin:/bin")
    wrapper.write_text(
        f'#!/bin/sh\n{{ env; echo "ARGS $PWD $*"; }} > "{calls}/$$" 2>/dev/null\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("AUTOPILOT_CODEX_GIT", str(wrapper))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-fleet")
    pushed = workspace.push(space, source.as_uri(), "f1", dict(os.environ))
    assert pushed == {"autopilot/f1/integration": "pushed"}
    assert git(source, "rev-parse", "autopilot/f1/integration") == git(clone, "rev-parse", "HEAD")
    for call in calls.iterdir():
        said = call.read_text()
        if str(clone) in said.partition("ARGS ")[2]:
            assert "sk-canary-fleet" not in said, said
