"""Attack first: nothing a lane holds is lost when lanes are cleaned up. `remove` deletes a
lane's worktree and branch only when all of it is in the integration branch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.queue import land
from tests.conftest import git
from tests.integration.lanes.helpers import RUN, begun, commit_in, lane_with, sha


def _kept(repo: Path, place: Path, work: str) -> bool:
    return place.is_dir() and worktrees.existing(repo, RUN).get("T1") == work


def test_a_lane_with_unmerged_commits_survives_remove(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    work = lane_with(repo, "T1", {"b.txt": "b\n"})
    place = worktrees.lane_path(repo, RUN, "T1")
    assert worktrees.remove(repo, RUN, "T1") is False
    assert _kept(repo, place, work) and (place / "b.txt").read_text() == "b\n"


def test_a_commit_made_after_the_merge_survives_remove(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    place = worktrees.lane_path(repo, RUN, "T1")
    later = commit_in(place, {"c.txt": "c\n"})
    assert worktrees.remove(repo, RUN, "T1") is False
    assert _kept(repo, place, later)


def test_uncommitted_work_in_a_merged_lane_survives_remove(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    place = worktrees.lane_path(repo, RUN, "T1")
    for name, change in (("b.txt", "edited\n"), ("new.txt", "untracked\n")):
        (place / name).write_text(change)
        assert worktrees.remove(repo, RUN, "T1") is False
        assert (place / name).read_text() == change
        git(place, "checkout", "-q", "--", ".")
        if name == "new.txt":
            (place / name).unlink()


def test_a_worktree_head_moved_off_its_branch_onto_new_commits_survives(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    place = worktrees.lane_path(repo, RUN, "T1")
    git(place, "checkout", "-q", "--detach")
    detached = commit_in(place, {"d.txt": "d\n"})
    assert worktrees.remove(repo, RUN, "T1") is False
    assert sha(place, "HEAD") == detached


def test_a_folder_that_is_not_the_lanes_worktree_is_never_removed(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    place = worktrees.lane_path(repo, RUN, "T1")
    (place / ".git").unlink()
    (place / ".git").mkdir()  # someone's own repository now
    assert worktrees.remove(repo, RUN, "T1") is False
    assert (place / "b.txt").exists()


def test_a_merged_clean_lane_is_removed_worktree_record_and_branch(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    place = worktrees.lane_path(repo, RUN, "T1")
    assert worktrees.remove(repo, RUN, "T1") is True
    assert not place.exists() and worktrees.existing(repo, RUN) == {}
    assert str(place) not in git(repo, "worktree", "list", "--porcelain")
    assert git(repo, "worktree", "prune", "--dry-run", "-v") == ""
    assert worktrees.remove(repo, RUN, "T1") is True  # nothing left: nothing to keep


def test_a_merged_branch_whose_folder_went_is_removed(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    shutil.rmtree(place)
    assert worktrees.remove(repo, RUN, "T1") is True  # made, nothing done: all of it merged
    assert worktrees.existing(repo, RUN) == {}
    assert not list((repo / ".git" / "worktrees").iterdir())


def test_a_worktree_whose_head_names_nothing_is_kept(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    admin = Path(git(place, "rev-parse", "--absolute-git-dir"))
    (admin / "HEAD").write_text("ref: refs/heads/nowhere\n")
    assert worktrees.remove(repo, RUN, "T1") is False
    assert place.is_dir()


def test_a_link_in_place_of_the_lane_is_neither_followed_nor_removed(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    land(repo, RUN, "T1")
    mine = tmp_path / "mine"
    shutil.move(str(place), str(mine))
    place.symlink_to(mine)
    assert worktrees.remove(repo, RUN, "T1") is False
    assert (mine / "a.txt").exists() and place.is_symlink()
    with pytest.raises(BridgeError, match="is a link"):
        worktrees.add(repo, RUN, "T1")
