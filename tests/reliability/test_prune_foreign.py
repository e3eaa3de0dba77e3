"""`loops --prune` removes ended loops' folders from `<state home>/projects/`. An unguarded
implementer writes the state home: it can make `projects` a link to a folder of the user's,
or put a folder of its choosing beside the loops'. The user runs the prune outside any wall,
trusting it to remove loops' records only: what is not a loop's folder of the state home's
own `projects` is never removed (nor is anything when `projects` is a link)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from autopilot_codex.paths import project_key, state_home
from tests.conftest import cli

OLD = time.time() - 30 * 86400


def aged(folder: Path) -> None:
    for path in [*folder.rglob("*"), folder]:
        os.utime(path, (OLD, OLD), follow_symlinks=False)


def ended_loop(projects: Path, worktree: Path) -> Path:
    folder = projects / project_key(worktree)
    folder.mkdir(parents=True)
    state = {"goal": "g", "status": "done", "style": "autopilot", "worktree": str(worktree)}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "events.jsonl").write_text(json.dumps({"ts": "2026-01-01T00:00:00+00:00"}) + "\n")
    aged(folder)
    return folder


def test_a_projects_link_to_the_users_folders_has_none_of_them_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "user-home" / "work"
    (work / "thesis").mkdir(parents=True)
    (work / "thesis" / "chapter1.tex").write_text("years of work\n")
    ended_loop(work, tmp_path / "looks-like-a-loop")
    aged(work)
    home = state_home()
    home.mkdir(parents=True)
    (home / "projects").symlink_to(work)

    code, out = cli(capsys, "loops", "--prune", "--older-than", "1d")

    assert (work / "thesis" / "chapter1.tex").read_text() == "years of work\n", out
    assert (work / project_key(tmp_path / "looks-like-a-loop")).is_dir(), out
    assert "removed" not in out, out


def test_a_folder_that_is_no_loops_is_never_pruned_and_an_ended_loop_still_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = state_home() / "projects"
    loop = ended_loop(projects, tmp_path / "repo")
    for name in ("notes", f"notes-{'0' * 12}"):
        (projects / name).mkdir(parents=True)
        (projects / name / "keep.txt").write_text("mine\n")
        aged(projects / name)

    code, out = cli(capsys, "loops", "--prune", "--older-than", "1d")

    assert code == 0, out
    assert (projects / "notes" / "keep.txt").read_text() == "mine\n", out
    assert (projects / f"notes-{'0' * 12}" / "keep.txt").read_text() == "mine\n", out
    assert not loop.exists(), out
