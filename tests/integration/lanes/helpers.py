"""A repository with a run begun, and lanes committed to as an implementer would."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.lanes import worktrees
from tests.conftest import git, make_repo

RUN = "run-1"


def begun(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    repo = make_repo(tmp_path / "repo", files or {"a.txt": "one\ntwo\nthree\n"})
    worktrees.begin(repo, RUN)
    return repo


def commit_in(place: Path, files: dict[str, str], message: str = "work") -> str:
    """Write `files` in a lane's worktree and commit them there, as the lane's implementer."""
    for name, text in files.items():
        target = place / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(place, "add", "-A")
    git(place, "commit", "-q", "-m", message)
    return git(place, "rev-parse", "HEAD")


def lane_with(repo: Path, task_id: str, files: dict[str, str]) -> str:
    return commit_in(worktrees.add(repo, RUN, task_id), files, f"task {task_id}")


def sha(repo: Path, ref: str) -> str:
    return git(repo, "rev-parse", ref)


def integration(repo: Path) -> str:
    return sha(repo, f"refs/heads/{worktrees.integration_branch(RUN)}")
