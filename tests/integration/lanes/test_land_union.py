"""Attack first: the built-in `union` merge driver merges a conflict silently, keeping both
sides' lines, so a lane's landing over another lane's change to the same lines would put on
the integration branch a file neither landing's reviewed diff shows. It needs no program, so
blanking the config's drivers does not reach it: an attribute in `.git/info/attributes` (which
the scratch folder of the merge does not hide) or `merge.default` in the config names it.
An unwalled lane can write either (walled, the common git directory is out of its reach).
The landing must refuse the conflict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.queue import Merged, Refused, land
from tests.conftest import git
from tests.integration.lanes.helpers import RUN, begun, integration, lane_with


def _racing(tmp_path: Path) -> Path:
    """T0 landed (line one changed), T1 waiting (the same line changed otherwise)."""
    repo = begun(tmp_path, {"a.txt": "one\ntwo\n"})
    lane_with(repo, "T0", {"a.txt": "ONE BY T0\ntwo\n"})
    lane_with(repo, "T1", {"a.txt": "ONE BY T1\ntwo\n"})
    assert isinstance(land(repo, RUN, "T0"), Merged)
    return repo


def _arm(repo: Path, how: str) -> None:
    if how == "info/attributes":
        info = Path(git(repo, "rev-parse", "--git-common-dir").strip())
        info = (info if info.is_absolute() else repo / info) / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text("* merge=union\n")
    else:
        git(repo, "config", "merge.default", "union")


@pytest.mark.parametrize("how", ["info/attributes", "merge.default"])
def test_control_plain_git_merges_the_conflict_silently(tmp_path: Path, how: str) -> None:
    repo = _racing(tmp_path)
    _arm(repo, how)
    lane = f"refs/heads/{worktrees.lane_branch(RUN, 'T1')}"
    tree = git(repo, "merge-tree", "--write-tree", integration(repo), lane).strip()
    merged = git(repo, "cat-file", "blob", f"{tree}:a.txt")
    assert "ONE BY T0" in merged and "ONE BY T1" in merged


@pytest.mark.parametrize("how", ["info/attributes", "merge.default"])
def test_a_union_merge_is_refused_as_the_conflict_it_is(tmp_path: Path, how: str) -> None:
    repo = _racing(tmp_path)
    _arm(repo, how)
    before = integration(repo)
    answer = land(repo, RUN, "T1")
    assert isinstance(answer, Refused), "a conflict merged silently by the union driver"
    assert answer.reason == "conflict" and "a.txt" in answer.detail
    assert integration(repo) == before
