"""Two worktrees of one repository are two loops; removing one loses nothing of the other."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir, state_home
from tests.conftest import git, payload, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import Hook, answer_of, marker_of, start_loop, state_of
from tests.reviews import wait_shadow


def snapshot(worktree: Path) -> dict[str, str]:
    """Every file of one loop's state directory, by content."""
    root = project_dir(worktree)
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "state.lock"
    }


@pytest.fixture
def two_loops(
    repo: Path, tmp_path: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, Path]:
    # The same directory name as the main worktree: names alone must not collide.
    linked = tmp_path / "elsewhere" / repo.name
    linked.parent.mkdir()
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    start_loop(repo, manager, capsys, session="sess-main")
    start_loop(linked, manager, capsys, session="sess-linked")
    # Each loop's first shadow snapshot is written by a worker of its own: done before a test
    # compares the loops' folders.
    wait_shadow(repo)
    wait_shadow(linked)
    return repo, linked


def test_each_worktree_has_its_own_loop(two_loops: tuple[Path, Path]) -> None:
    main_tree, linked = two_loops
    assert project_dir(main_tree) != project_dir(linked)
    assert marker_of(main_tree) != marker_of(linked)
    assert state_of(main_tree)["session_id"] == "sess-main"
    assert state_of(linked)["session_id"] == "sess-linked"
    assert state_of(linked)["worktree"] == str(linked.resolve())
    # The state lives outside both worktrees: git never sees it, cleanup never deletes it.
    for tree in two_loops:
        assert not project_dir(tree).resolve().is_relative_to(tree.resolve())


def test_one_worktrees_hooks_never_touch_the_other(
    two_loops: tuple[Path, Path], manager: FakeOpenAI, hook: Hook
) -> None:
    main_tree, linked = two_loops
    (linked / "deep" / "er").mkdir(parents=True)
    untouched = snapshot(linked)
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    hook("PostToolUse", payload("PostToolUse", main_tree, "sess-main", tool_name="Read"))
    assert answer_of(hook("Stop", payload("Stop", main_tree, "sess-main")))["decision"] == "block"
    # The main loop's session working in the linked worktree reaches nothing there.
    hook("Stop", payload("Stop", linked / "deep" / "er", "sess-main"))
    hook("PreCompact", payload("PreCompact", linked, "sess-main", trigger="auto"))
    assert snapshot(linked) == untouched
    assert state_of(main_tree)["iteration"] == 1

    wait_shadow(main_tree)
    untouched = snapshot(main_tree)
    hook(
        "PostToolUse",
        payload("PostToolUse", linked / "deep" / "er", "sess-linked", tool_name="Read"),
    )
    assert state_of(linked)["tool_events"] == 1
    assert snapshot(main_tree) == untouched


def test_removing_a_worktree_loses_nothing_of_the_other(
    two_loops: tuple[Path, Path], hook: Hook
) -> None:
    main_tree, linked = two_loops
    kept = snapshot(main_tree)
    git(main_tree, "worktree", "remove", str(linked))
    git(main_tree, "worktree", "prune")
    assert not linked.exists()

    assert snapshot(main_tree) == kept
    assert marker_of(main_tree).exists()
    hook("PostToolUse", payload("PostToolUse", main_tree, "sess-main", tool_name="Read"))
    assert state_of(main_tree)["tool_events"] == 1
    assert state_of(main_tree)["status"] == "running"
    # The removed worktree's own record is still there to read, under the state home.
    assert (project_dir(linked) / "state.json").exists()
    assert project_dir(linked).is_relative_to(state_home())
    # A late hook from the removed directory is a silent no-op.
    late = hook("Stop", payload("Stop", linked, "sess-linked"))
    assert (late.code, late.stdout) == (0, "")
