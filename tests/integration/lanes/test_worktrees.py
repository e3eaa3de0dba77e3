"""Lane branches and worktrees on real repositories: made from the integration head, found
again, and the user's branch moved only forward."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.queue import Merged, land
from autopilot_codex.paths import state_home
from tests.conftest import git, make_repo
from tests.integration.lanes.helpers import RUN, begun, commit_in, integration, lane_with, sha


def test_begin_makes_the_integration_branch_at_head_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    head = sha(repo, "HEAD")
    assert worktrees.begin(repo, RUN) == head
    commit_in(repo, {"later.txt": "x"})
    assert worktrees.begin(repo, RUN) == head  # found, not moved
    assert git(repo, "branch", "--show-current") == "main"


def test_begin_needs_a_commit(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    with pytest.raises(BridgeError, match="has none"):
        worktrees.begin(repo, RUN)


def test_lanes_live_beside_the_state_home_apart_per_repository(tmp_path: Path) -> None:
    one = begun(tmp_path / "a")
    two = begun(tmp_path / "b")
    home = worktrees.lanes_home(one)
    assert home.parent == state_home().parent / f"{state_home().name}-lanes"
    assert home != worktrees.lanes_home(two)
    assert home.name.startswith("repo-")
    place = worktrees.add(one, RUN, "T1")
    assert place == home / RUN / "+541"
    assert one not in place.parents and state_home() not in place.parents
    assert worktrees.lanes_home(place) == home  # asked from inside a lane: the same


def test_a_lane_is_a_worktree_git_knows_on_its_branch(repo: Path) -> None:
    worktrees.begin(repo, RUN)
    place = worktrees.add(repo, RUN, "T1")
    assert (place / "README.md").read_text() == "# demo\n"
    assert git(place, "symbolic-ref", "HEAD") == "refs/heads/autopilot/run-1/task/+541"
    assert git(place, "status", "--porcelain") == ""
    assert str(place) in git(repo, "worktree", "list", "--porcelain")
    work = commit_in(place, {"b.txt": "b\n"})
    assert worktrees.existing(repo, RUN) == {"T1": work}
    assert git(repo, "status", "--porcelain") == ""  # the user's tree saw nothing


def test_add_again_resumes_the_lane_as_it_is(repo: Path) -> None:
    worktrees.begin(repo, RUN)
    place = worktrees.add(repo, RUN, "T1")
    work = commit_in(place, {"b.txt": "b\n"})
    (place / "draft.txt").write_text("not committed")
    assert worktrees.add(repo, RUN, "T1") == place
    assert (place / "draft.txt").exists() and sha(place, "HEAD") == work


def test_a_lane_whose_folder_went_is_made_again_from_its_branch(repo: Path) -> None:
    worktrees.begin(repo, RUN)
    place = worktrees.add(repo, RUN, "T1")
    work = commit_in(place, {"b.txt": "b\n"})
    shutil.rmtree(place)
    assert worktrees.add(repo, RUN, "T1") == place
    assert sha(place, "HEAD") == work and (place / "b.txt").read_text() == "b\n"


def test_a_folder_in_the_way_is_never_overwritten(repo: Path) -> None:
    worktrees.begin(repo, RUN)
    place = worktrees.lane_path(repo, RUN, "T1")
    place.mkdir(parents=True)
    (place / "mine.txt").write_text("keep")
    with pytest.raises(BridgeError, match="in the way"):
        worktrees.add(repo, RUN, "T1")
    assert (place / "mine.txt").read_text() == "keep"


def test_add_before_begin_is_an_error(repo: Path) -> None:
    with pytest.raises(BridgeError, match="call begin first"):
        worktrees.add(repo, RUN, "T1")


def test_a_new_lane_starts_from_the_current_integration_head(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    assert land(repo, RUN, "T1") is not None
    place = worktrees.add(repo, RUN, "T2")
    assert (place / "b.txt").read_text() == "b\n"


def test_existing_lists_every_lane_and_only_the_runs(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    ids = ["T1", "../x", "a b", "refs/heads/main"]
    made = {i: lane_with(repo, i, {f"f{n}.txt": i}) for n, i in enumerate(ids)}
    worktrees.begin(repo, "other")
    worktrees.add(repo, "other", "T9")
    git(repo, "branch", "autopilot/run-1/task/NOT-ESCAPED")  # no id makes this name
    assert worktrees.existing(repo, RUN) == made
    assert git(repo, "rev-parse", "main") == sha(repo, "HEAD")  # `refs/heads/main` escaped


def test_merged_follows_the_integration_branch(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    assert not worktrees.merged(repo, RUN, "T1")  # no branch
    lane_with(repo, "T1", {"b.txt": "b\n"})
    assert not worktrees.merged(repo, RUN, "T1")
    land(repo, RUN, "T1")
    assert worktrees.merged(repo, RUN, "T1")


# finish: the user's branch moves only forward, only when it has not moved.


def test_finish_fast_forwards_the_checked_out_branch_and_its_tree(tmp_path: Path) -> None:
    repo = begun(tmp_path, {"a.txt": "one\n", "gone.txt": "x\n"})
    start = sha(repo, "main")
    place = worktrees.add(repo, RUN, "T1")
    (place / "gone.txt").unlink()
    commit_in(place, {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    said = worktrees.finish(repo, RUN, "main", start)
    assert sha(repo, "main") == integration(repo)
    assert said.startswith("Your branch main now has the run's work")
    assert (repo / "b.txt").read_text() == "b\n" and not (repo / "gone.txt").exists()
    assert git(repo, "status", "--porcelain") == ""
    again = worktrees.finish(repo, RUN, "main", sha(repo, "main"))
    assert again.startswith("Your branch main already has the run's work")


def test_finish_moves_a_branch_no_tree_has_checked_out(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    start = sha(repo, "main")
    git(repo, "checkout", "-q", "-b", "elsewhere")
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    assert "now has the run's work" in worktrees.finish(repo, RUN, "main", start)
    assert sha(repo, "main") == integration(repo)
    assert not (repo / "b.txt").exists()  # the checked-out branch's tree is not touched


def test_finish_leaves_a_branch_that_moved_and_names_the_integration_branch(
    tmp_path: Path,
) -> None:
    repo = begun(tmp_path)
    start = sha(repo, "main")
    mine = commit_in(repo, {"user.txt": "the user's own work"})
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    said = worktrees.finish(repo, RUN, "main", start)
    assert sha(repo, "main") == mine
    assert "autopilot/run-1/integration" in said and "moved since the run began" in said


def test_finish_never_overwrites_the_users_uncommitted_edit(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    start = sha(repo, "main")
    lane_with(repo, "T1", {"a.txt": "the lane's\n"})
    land(repo, RUN, "T1")
    (repo / "a.txt").write_text("the user's edit\n")
    said = worktrees.finish(repo, RUN, "main", start)
    assert "fast-forward of its work tree failed" in said and "autopilot/run-1/integration" in said
    assert sha(repo, "main") == start
    assert (repo / "a.txt").read_text() == "the user's edit\n"


def test_finish_leaves_a_branch_the_run_did_not_start_from(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    git(repo, "checkout", "-q", "--orphan", "other")
    commit_in(repo, {"o.txt": "o"})
    other = sha(repo, "other")
    said = worktrees.finish(repo, RUN, "other", other)
    assert "is not an ancestor" in said and sha(repo, "other") == other


def test_finish_without_a_run_is_an_error(repo: Path) -> None:
    with pytest.raises(BridgeError, match="no integration branch"):
        worktrees.finish(repo, RUN, "main", sha(repo, "main"))


def test_a_sha256_repository_works_the_same(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", "--object-format=sha256")
    commit_in(repo, {"a.txt": "one\n"})
    start = worktrees.begin(repo, RUN)
    assert len(start) == 64
    lane_with(repo, "T1", {"b.txt": "b\n"})
    assert isinstance(land(repo, RUN, "T1"), Merged)
    assert worktrees.remove(repo, RUN, "T1")
    assert "now has the run's work" in worktrees.finish(repo, RUN, "main", start)


def test_a_worktree_that_cannot_be_filled_leaves_nothing_behind(repo: Path) -> None:
    place = repo.parent / "half"
    with pytest.raises(BridgeError):
        worktrees.attach(repo, place, "0" * 40, "autopilot-half")
    assert not place.exists() and not (repo / ".git" / "worktrees" / "autopilot-half").exists()


def test_the_rounds_driver_commits_in_a_lane_walled_onto_its_branch(tmp_path: Path) -> None:
    """A lane is run by the rounds driver: its walled commit lands on the lane's branch."""
    from autopilot_codex.rounds.commit import commit_round

    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    (place / "b.txt").write_text("b\n")
    commit_round(place, "wrote b", 1, RUN)
    assert worktrees.existing(repo, RUN)["T1"] == sha(place, "HEAD")
    assert git(place, "show", "HEAD:b.txt") == "b" and sha(repo, "main") == integration(repo)


def test_a_branch_planted_for_a_task_not_started_is_refused_when_new(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1", new=True)
    planted = commit_in(place, {"evil.txt": "x"})
    git(repo, "update-ref", f"refs/heads/{worktrees.lane_branch(RUN, 'T2')}", planted)
    with pytest.raises(BridgeError, match="never started"):
        worktrees.add(repo, RUN, "T2", new=True)
    assert not worktrees.lane_path(repo, RUN, "T2").exists()
