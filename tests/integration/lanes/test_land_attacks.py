"""Attack first: a lane's implementer plants programs for git and the checks to run, and
`land` must run none of them outside the wall.

The lane's tree adds `.gitattributes` naming a filter, a merge driver and a diff driver for
every file; the repository's config (which an implementer can write) defines each of them, an
fsmonitor and a hooks folder, all as one program that records that it ran. Every landing step
is taken: a content merge of a file both sides changed (merge-tree), the checks' worktree
(checkout), the checks' tree digest (status), the diff for the follow-up, the ref's move
(the reference-transaction hook). The same program run by plain git records itself (the
control), so each test can fail.

Unwalled, the program is not run at all: the runner's overrides and blanked drivers alone.
Walled too, where the machine has a wall. And a check the user set runs a script the lane
wrote: walled, it cannot touch the user's repository nor move a branch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autopilot_codex.checks.run import spec
from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.queue import Merged, Refused, land
from autopilot_codex.sandbox import jail
from tests.conftest import git
from tests.integration.lanes.helpers import RUN, begun, commit_in, integration, lane_with

HOOKS = ("reference-transaction", "post-checkout", "post-merge", "pre-merge-commit",
         "post-index-change", "pre-commit", "post-commit")  # fmt: skip
ATTRIBUTES = "* filter=evil merge=evil diff=evil\n"


def _armed(tmp_path: Path, repo: Path) -> Path:
    """The repository's config armed with one program; returns where the program reports."""
    report = tmp_path / "ran"
    program = tmp_path / "evil.sh"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {report}\ncat\n')
    program.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\necho hook {name} >> {report}\n")
        (hooks / name).chmod(0o755)
        (repo / ".git" / "hooks" / name).write_text((hooks / name).read_text())
        (repo / ".git" / "hooks" / name).chmod(0o755)
    for key, value in (
        ("filter.evil.clean", str(program)),
        ("filter.evil.smudge", str(program)),
        ("filter.evil.required", "true"),
        ("merge.evil.driver", f"{program} %O %A %B"),
        ("diff.evil.textconv", str(program)),
        ("diff.evil.command", str(program)),
        ("core.fsmonitor", str(program)),
        ("core.hooksPath", str(hooks)),
    ):
        git(repo, "config", key, value)
    return report


def _lanes_racing_on_one_file(tmp_path: Path) -> Path:
    """T0 landed (line one changed), T1 waiting (line five changed), both over a tree whose
    `.gitattributes` (an earlier lane's, say) names the drivers for every file."""
    repo = begun(tmp_path, {"a.txt": "one\ntwo\nthree\nfour\nfive\n", ".gitattributes": ATTRIBUTES})
    lane_with(repo, "T0", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n"})
    lane_with(repo, "T1", {"a.txt": "one\ntwo\nthree\nfour\nFIVE\n"})
    assert isinstance(land(repo, RUN, "T0"), Merged)
    return repo


def test_control_plain_git_runs_the_planted_program(tmp_path: Path) -> None:
    repo = _lanes_racing_on_one_file(tmp_path)
    report = _armed(tmp_path, repo)
    lane = f"refs/heads/{worktrees.lane_branch(RUN, 'T1')}"
    merged = git(repo, "merge-tree", "--write-tree", integration(repo), lane)
    assert f"{tmp_path}/evil.sh .merge_file" in report.read_text()
    # And it merged silently, keeping one side: the integration's line five is lost.
    assert git(repo, "show", f"{merged}:a.txt") == "ONE\ntwo\nthree\nfour\nfive"
    git(repo, "update-ref", "refs/heads/x", "HEAD")
    assert "hook reference-transaction" in report.read_text()


@pytest.mark.parametrize("info", [False, True], ids=["tree", "info-attributes"])
@pytest.mark.parametrize("walled", [False, True], ids=["unwalled", "walled"])
def test_landing_runs_nothing_the_lane_planted(
    tmp_path: Path, walled: bool, info: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if walled and not jail.probe().ok:
        pytest.skip("no working wall here")
    if not walled:
        monkeypatch.setattr(jail, "_known", jail.Wall("linux", False, why="a test"))
    repo = _lanes_racing_on_one_file(tmp_path)
    report = _armed(tmp_path, repo)
    if info:  # read by every git call of the repository, whatever its work tree
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text(ATTRIBUTES)
    head = integration(repo)
    outcome = land(repo, RUN, "T1", checks=[spec("cat a.txt")], review=lambda d: (True, "ok"))
    assert not report.exists(), report.read_text()
    # Both sides' lines, or a conflict: never a silent merge keeping one side (what the planted
    # driver did for plain git). The driver's name is blanked to `false` and the merge reads
    # no attributes of the user's tree; git 2.39 merges the text itself.
    if info:
        assert isinstance(outcome, Refused) and outcome.reason == "conflict"
        assert "a.txt" in outcome.detail and integration(repo) == head
    else:
        assert isinstance(outcome, Merged)
        assert git(repo, "show", f"{outcome.sha}:a.txt") == "ONE\ntwo\nthree\nfour\nFIVE"


@pytest.mark.parametrize("walled", [False, True], ids=["unwalled", "walled"])
def test_finishing_runs_nothing_the_lanes_planted(
    tmp_path: Path, walled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if walled and not jail.probe().ok:
        pytest.skip("no working wall here")
    if not walled:
        monkeypatch.setattr(jail, "_known", jail.Wall("linux", False, why="a test"))
    repo = begun(tmp_path, {"a.txt": "one\n", ".gitattributes": ATTRIBUTES})
    start = git(repo, "rev-parse", "main")
    lane_with(repo, "T1", {"b.txt": "b\n"})
    assert isinstance(land(repo, RUN, "T1"), Merged)
    report = _armed(tmp_path, repo)
    said = worktrees.finish(repo, RUN, "main", start)
    assert not report.exists(), report.read_text()
    assert "now has the run's work" in said and (repo / "b.txt").read_text() == "b\n"


def test_control_plain_git_runs_the_planted_program_on_a_fast_forward(tmp_path: Path) -> None:
    repo = begun(tmp_path, {"a.txt": "one\n", ".gitattributes": ATTRIBUTES})
    lane_with(repo, "T1", {"b.txt": "b\n"})
    land(repo, RUN, "T1")
    report = _armed(tmp_path, repo)
    git(repo, "merge", "--ff-only", worktrees.integration_branch(RUN))
    assert "hook post-merge" in report.read_text() and "evil.sh" in report.read_text()


def test_a_lane_that_adds_a_filter_is_checked_out_without_it(tmp_path: Path) -> None:
    repo = begun(tmp_path, {"a.txt": "one\n"})
    lane_with(repo, "T1", {".gitattributes": ATTRIBUTES, "b.txt": "b\n"})
    report = _armed(tmp_path, repo)
    outcome = land(repo, RUN, "T1", checks=[spec("grep -q b b.txt")])
    assert isinstance(outcome, Merged), outcome
    assert not report.exists(), report.read_text()


@pytest.mark.skipif(not jail.probe().ok, reason="no working wall here")
@pytest.mark.parametrize("walled", [True, False])
def test_a_check_running_the_lanes_script_cannot_reach_the_repository(
    tmp_path: Path, walled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control (unwalled) shows the script does what it says when nothing stops it."""
    if not walled:
        monkeypatch.setattr(jail, "_known", jail.Wall("linux", False, why="a test"))
    repo = begun(tmp_path)
    config = (repo / ".git" / "config").read_text()
    ref = f"refs/heads/{worktrees.integration_branch(RUN)}"
    script = (
        "#!/bin/sh\n"
        f"echo '[core]\n\thooksPath = /nowhere' >> {repo}/.git/config\n"
        f"git -C {repo} update-ref {ref} $(git -C {repo} rev-parse {ref}~0^{{tree}} | "
        f"xargs -I T git -C {repo} commit-tree T -p {ref} -m planted)\n"
        f"echo planted > {repo}/planted.txt\n"
        "exit 0\n"
    )
    work = lane_with(repo, "T1", {"check.sh": script})
    try:
        outcome = land(repo, RUN, "T1", checks=[spec("sh ./check.sh")])
    except BridgeError:  # unwalled: the plant keeps moving the branch, and the queue says so
        outcome = None
    touched = (repo / ".git" / "config").read_text() != config or (repo / "planted.txt").exists()
    if walled:
        assert isinstance(outcome, Merged) and not touched
        assert git(repo, "rev-parse", f"{outcome.sha}^2") == work  # the real merge, not a plant
    else:
        assert touched and outcome is None


def test_a_lane_cannot_name_its_way_onto_the_users_branch(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    main = git(repo, "rev-parse", "main")
    for task in ("refs/heads/main", "../../main", "main"):
        place = worktrees.add(repo, RUN, task)
        commit_in(place, {f"{len(task)}.txt": task})
        assert git(place, "symbolic-ref", "HEAD").startswith("refs/heads/autopilot/run-1/task/")
        land(repo, RUN, task)
    assert git(repo, "rev-parse", "main") == main
    assert sorted(worktrees.existing(repo, RUN)) == sorted(
        ("refs/heads/main", "../../main", "main")
    )


def test_git_itself_refuses_nothing_the_lanes_make(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    for task in ("a b", ".", "..", "x.lock", "@{-1}"):
        worktrees.add(repo, RUN, task)
    done = subprocess.run(["git", "fsck", "--no-progress"], cwd=repo, capture_output=True)
    assert done.returncode == 0, done.stderr
