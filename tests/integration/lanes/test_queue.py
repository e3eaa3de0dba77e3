"""The merge queue on real repositories: a merge, or a refusal that moved nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.checks.run import spec
from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes import queue, worktrees
from autopilot_codex.lanes.queue import Merged, Refused, land
from tests.conftest import git
from tests.integration.lanes.helpers import RUN, begun, integration, lane_with, sha


def _parents(repo: Path, commit: str) -> list[str]:
    return git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]


def test_a_lane_lands_as_a_merge_commit_and_nothing_else_moves(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    before, user_head = integration(repo), sha(repo, "main")
    work = lane_with(repo, "T1", {"b.txt": "b\n"})
    outcome = land(repo, RUN, "T1")
    assert isinstance(outcome, Merged) and outcome.sha == integration(repo)
    assert _parents(repo, outcome.sha) == [before, work]
    assert "Merge task T1" in git(repo, "log", "-1", "--format=%s", outcome.sha)
    assert sha(repo, "main") == user_head and git(repo, "status", "--porcelain") == ""
    assert land(repo, RUN, "T1") == Merged(outcome.sha)  # again: already in, nothing moves


def test_two_lanes_on_the_same_lines_are_a_conflict_never_forced(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"a.txt": "ONE\ntwo\nthree\n"})
    lane_with(repo, "T2", {"a.txt": "uno\ntwo\nthree\n", "c.txt": "c\n"})
    assert isinstance(land(repo, RUN, "T1"), Merged)
    head = integration(repo)
    outcome = land(repo, RUN, "T2")
    assert isinstance(outcome, Refused) and outcome.reason == "conflict"
    assert "a.txt" in outcome.detail and "c.txt" not in outcome.detail
    assert "+uno" in outcome.diff and "+c" in outcome.diff and "ONE" not in outcome.diff
    assert integration(repo) == head


def test_a_check_red_on_the_merged_tree_blocks_the_merge(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    lane_with(repo, "T2", {"c.txt": "c\n"})
    both = spec("! (test -f b.txt && test -f c.txt)")
    assert isinstance(land(repo, RUN, "T1", checks=[both]), Merged)  # each alone is green
    head = integration(repo)
    outcome = land(repo, RUN, "T2", checks=[both])
    assert isinstance(outcome, Refused) and outcome.reason == "checks"
    assert "FAILED" in outcome.detail and "test -f c.txt" in outcome.detail
    assert integration(repo) == head
    run_folder = worktrees.lanes_home(repo) / RUN
    assert sorted(p.name for p in run_folder.iterdir()) == ["+541", "+542", ".queue"]
    assert list((run_folder / ".queue").iterdir()) == []  # the checks' worktree went
    assert not [p for p in (repo / ".git" / "worktrees").iterdir() if "checks" in p.name]


def test_what_a_killed_landing_left_is_swept_and_no_lane_with_it(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    kept = lane_with(repo, "checks-x", {"k.txt": "kept\n"})  # a lane whose name looks like one
    lane_with(repo, "T1", {"b.txt": "b\n"})
    scratch = worktrees.lanes_home(repo) / RUN / ".queue"
    left = worktrees.attach(
        repo, scratch / "checks-dead", integration(repo), "autopilot-checks-dead"
    )
    (scratch / "merge-dead").mkdir()
    assert isinstance(land(repo, RUN, "T1"), Merged)
    assert not left.work_tree.exists() and not left.git_dir.exists()
    assert not (scratch / "merge-dead").exists()
    assert worktrees.existing(repo, RUN)["checks-x"] == kept
    assert (worktrees.lane_path(repo, RUN, "checks-x") / "k.txt").exists()


def test_the_checks_get_the_names_the_user_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    monkeypatch.setenv("LANE_FLAG", "yes")
    check = [spec('test "$LANE_FLAG" = yes')]
    assert isinstance(land(repo, RUN, "T1", checks=check), Refused)
    assert isinstance(land(repo, RUN, "T1", checks=check, checks_env=["LANE_FLAG"]), Merged)


def test_the_review_reads_the_lanes_diff_and_can_refuse(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    head = integration(repo)
    lane_with(repo, "T1", {"b.txt": "bee\n"})
    seen: list[str] = []

    def review(diff: str) -> tuple[bool, str]:
        seen.append(diff)
        return False, "b.txt misspells bee"

    outcome = land(repo, RUN, "T1", review=review)
    assert outcome == Refused("review", "b.txt misspells bee", seen[0])
    assert "+bee" in seen[0] and integration(repo) == head
    assert isinstance(land(repo, RUN, "T1", review=lambda diff: (True, "fine")), Merged)


def test_a_huge_diff_is_cut_and_says_so(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"big.txt": "".join(f"line {n}\n" for n in range(20_000))})
    outcome = land(repo, RUN, "T1", review=lambda diff: (False, "too big"))
    assert isinstance(outcome, Refused)
    assert len(outcome.diff) <= queue.DIFF_CHARS_MAX + 60
    assert outcome.diff.rstrip().endswith("characters in all]")


def test_a_lane_without_its_branch_is_an_error(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    with pytest.raises(BridgeError, match="no lane or integration branch"):
        land(repo, RUN, "T1")


def test_a_merge_driver_that_cannot_be_named_refuses_the_merge(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    head = integration(repo)
    git(repo, "config", "merge.a=b.driver", "true")
    outcome = land(repo, RUN, "T1")
    assert isinstance(outcome, Refused) and outcome.reason == "conflict"
    assert "cannot switch off" in outcome.detail and integration(repo) == head


def test_a_lane_branch_rewritten_to_unrelated_history_is_refused(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    head = integration(repo)
    place = worktrees.add(repo, RUN, "T1")
    git(place, "checkout", "-q", "--orphan", "rewritten")
    git(place, "rm", "-rq", "--cached", ".")
    (place / "z.txt").write_text("z\n")
    git(place, "add", "z.txt")
    git(place, "commit", "-q", "-m", "unrelated")
    ref = f"refs/heads/{worktrees.lane_branch(RUN, 'T1')}"
    git(repo, "update-ref", ref, sha(place, "HEAD"))
    outcome = land(repo, RUN, "T1")
    assert isinstance(outcome, Refused) and outcome.reason == "conflict"
    assert "no history" in outcome.detail and "+z" in outcome.diff
    assert integration(repo) == head
