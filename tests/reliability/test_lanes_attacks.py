"""Attack first: a lane's implementer (or a kill -9) against the supervisor's own processes.

Each route has its control: the same plant where the defence is off does what it says, so
each test can fail.

- The lane's own process (`run` in the lane's worktree) is a Python program: started with its
  cwd in the worktree, `python -m` puts the worktree first on `sys.path`, and the lane's
  `autopilot_codex/` package (written by its implementer, or merged from another lane) runs
  unwalled as the supervisor.
- A worktree made half-way (the driver killed while git filled it) must never be taken as a
  lane to continue: its index says every file is there, its folder lacks some, and the lane's
  next commit would delete them.
"""

from __future__ import annotations

import fcntl
import math
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autopilot_codex.checks.run import spec
from autopilot_codex.errors import BridgeError
from autopilot_codex.gitrepo import locate
from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.budget import Amount
from autopilot_codex.lanes.driver import FOLLOW_UPS
from autopilot_codex.lanes.graph import contract, problems
from autopilot_codex.lanes.lane import LaneSpec, command, start
from autopilot_codex.lanes.queue import Merged, land
from autopilot_codex.manager.schemas import Plan, Task
from autopilot_codex.sandbox import jail
from tests.conftest import git, task
from tests.integration.lanes.helpers import RUN, begun, commit_in, integration

FILES = {f"pkg/m{i}.py": f"X = {i}\n" for i in range(6)} | {"a.txt": "one\n"}


def _planted(place: Path, report: Path) -> None:
    """A package named as the bridge's, in the lane's worktree, that reports it ran."""
    body = f"open({str(report)!r}, 'w').write('ran')\nraise SystemExit(0)\n"
    for name in ("__init__.py", "__main__.py"):
        (place / "autopilot_codex").mkdir(exist_ok=True)
        (place / "autopilot_codex" / name).write_text(body)


def _lane_spec(place: Path) -> LaneSpec:
    # resume: the lane looks for its rounds run and ends at once (there is none here).
    inf = math.inf
    return LaneSpec("T1", place, "codex", "do it", Amount(1.0, inf, inf), 30.0, resume=True)


def test_control_a_lane_process_in_its_worktree_runs_the_planted_package(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    report = tmp_path / "ran"
    _planted(place, report)
    # Two defences, each enough alone: the lane's Python is isolated (`-I`), and it starts
    # outside the worktree. Without both, the planted package runs as the bridge.
    argv = command(_lane_spec(place))
    subprocess.run(argv, cwd=place, capture_output=True, check=False)
    assert not report.exists()
    bare = [a for a in argv if a != "-I"]
    subprocess.run(bare, cwd=place, capture_output=True, check=False)
    assert report.read_text() == "ran"


def test_a_lane_process_imports_nothing_from_its_worktree(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    report = tmp_path / "ran"
    _planted(place, report)
    lane = start(_lane_spec(place), tmp_path / "out")
    lane.proc.wait()
    assert lane.poll() != 0  # the real bridge ran: there is no rounds run to resume here
    assert "resume" in lane.log.read_text()
    assert not report.exists()


_DIES = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from autopilot_codex.lanes import worktrees

    real = worktrees.run_bytes
    def dying(where, *args, **kw):
        if args[0] == sys.argv[2]:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(where, *args, **kw)
    worktrees.run_bytes = dying
    worktrees.add(Path(sys.argv[1]), "run-1", "T1")
    """
)


def _killed_while_adding(repo: Path, at: str) -> None:
    """A real process running `add`, killed (SIGKILL) just before git's `at` step."""
    done = subprocess.run(
        [sys.executable, "-c", _DIES, str(repo), at], capture_output=True, check=False
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


def _whole(repo: Path, place: Path) -> None:
    """The lane's worktree holds the integration head, every file, nothing to commit."""
    head = integration(repo)
    assert git(place, "rev-parse", "HEAD") == head
    assert git(place, "status", "--porcelain") == ""
    for name, text in FILES.items():
        assert (place / name).read_text() == text


@pytest.mark.parametrize("at", ["read-tree", "checkout-index"])
def test_a_worktree_made_half_way_is_made_again_on_resume(tmp_path: Path, at: str) -> None:
    repo = begun(tmp_path, FILES)
    _killed_while_adding(repo, at)
    place = worktrees.add(repo, RUN, "T1")  # the resumed driver
    _whole(repo, place)
    # And a lane taken through its end goes, leaving nothing of the killed attempt behind.
    assert worktrees.remove(repo, RUN, "T1")
    assert sorted(p.name for p in place.parent.iterdir()) == []
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_control_a_half_filled_worktree_taken_as_a_lane_commits_deletions(tmp_path: Path) -> None:
    """What the crash would leave if the link to git came before the files: git sees every
    file deleted, and the lane's next `add -A` commits that."""
    repo = begun(tmp_path, FILES)
    place = worktrees.add(repo, RUN, "T1")
    for name in FILES:
        (place / name).unlink()
    lines = git(place, "status", "--porcelain").splitlines()
    assert len(lines) == len(FILES) and all(line.strip().startswith("D ") for line in lines)


def test_the_queues_checks_worktree_killed_half_way_is_swept(tmp_path: Path) -> None:
    """The merge queue's own worktree for the checks, killed while made: the next landing
    leaves neither its folder nor git's record of it."""
    from autopilot_codex.lanes.queue import _sweep

    repo = begun(tmp_path, FILES)
    common = repo / ".git"
    place = worktrees.lanes_home(repo) / "run-1" / ".queue" / "checks-0123456789abcdef"
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from autopilot_codex.lanes import worktrees
        real = worktrees.run_bytes
        def dying(where, *args, **kw):
            if args[0] == "checkout-index":
                os.kill(os.getpid(), signal.SIGKILL)
            return real(where, *args, **kw)
        worktrees.run_bytes = dying
        worktrees.attach(Path({str(repo)!r}), Path({str(place)!r}), {integration(repo)!r}, "autopilot-{place.name}")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert (common / "worktrees" / f"autopilot-{place.name}").is_dir()
    _sweep(repo, RUN)
    assert not (common / "worktrees").exists() or not any((common / "worktrees").iterdir())
    assert not place.parent.exists()


def test_kill_points_are_real(tmp_path: Path) -> None:
    """The child's kill really lands inside `add` (else the tests above prove nothing): it
    leaves the half-filled folder and git's record of it, and no lane folder."""
    repo = begun(tmp_path, FILES)
    _killed_while_adding(repo, "checkout-index")
    place = worktrees.lane_path(repo, RUN, "T1")
    assert not place.exists() and worktrees.partial(place).is_dir()
    assert len(list((repo / ".git" / "worktrees").iterdir())) == 1


_HOLDS = textwrap.dedent(
    """
    import fcntl, os, sys, time
    held = []
    for folder, _, names in os.walk(sys.argv[1]):
        for name in names:
            try:
                handle = open(os.path.join(folder, name), "rb")  # reading is all the wall allows
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue
            held.append(handle)
    print(len(held), flush=True)
    time.sleep(600)
    """
)


@contextmanager
def _holding_every_lock(under: Path) -> Iterator[None]:
    """A lane's implementer that locks every file it can read under `under` and keeps them."""
    with subprocess.Popen(
        [sys.executable, "-c", _HOLDS, str(under)], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        proc.stdout.readline()  # its locks are held from here on
        try:
            yield
        finally:
            proc.kill()


_LANDS = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from autopilot_codex.lanes.queue import land
    print(type(land(Path(sys.argv[1]), "run-1", "T1")).__name__)
    """
)


def test_control_a_lane_can_lock_what_it_can_read(tmp_path: Path) -> None:
    """A read-only handle takes an exclusive flock: a lock file a lane can read, it can hold."""
    folder = tmp_path / "readable"
    folder.mkdir()
    (folder / "some.lock").write_bytes(b"")
    with (
        _holding_every_lock(folder),
        (folder / "some.lock").open("rb") as handle,
        pytest.raises(BlockingIOError),
    ):
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_lane_holding_every_lock_it_can_read_never_stops_the_queue(tmp_path: Path) -> None:
    repo = begun(tmp_path, FILES)
    place = worktrees.add(repo, RUN, "T1")
    commit_in(place, {"b.txt": "b\n"})
    # An earlier landing of the run left whatever the queue keeps beside the lanes.
    worktrees.add(repo, RUN, "T0")
    land(repo, RUN, "T0")
    with _holding_every_lock(worktrees.lanes_home(repo)):
        done = subprocess.run(
            [sys.executable, "-c", _LANDS, str(repo)], capture_output=True, text=True, timeout=120
        )
    assert done.stdout.strip() == "Merged", done.stderr


def _nested_commit(place: Path) -> str:
    """The lane's implementer made a repository inside its worktree and committed there; the
    lane's commit records it as a gitlink: the nested commit exists nowhere else."""
    nested = place / "sub"
    nested.mkdir()
    git(nested, "init", "-q", "-b", "main")
    (nested / "work.txt").write_text("only here\n")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "nested work")
    return git(nested, "rev-parse", "HEAD")


def test_control_a_merged_lane_with_a_nested_repository_looks_clean(tmp_path: Path) -> None:
    repo = begun(tmp_path, FILES)
    place = worktrees.add(repo, RUN, "T1")
    inner = _nested_commit(place)
    commit_in(place, {"b.txt": "b\n"})
    assert git(place, "ls-files", "-s", "sub").startswith(f"160000 {inner}")
    assert isinstance(land(repo, RUN, "T1"), Merged)
    assert git(place, "status", "--porcelain", "--ignore-submodules=all") == ""


@pytest.mark.parametrize("ignored", [False, True], ids=["gitlink", "ignored"])
def test_removing_a_lane_never_loses_a_nested_repositorys_commits(
    tmp_path: Path, ignored: bool
) -> None:
    repo = begun(tmp_path, FILES)
    place = worktrees.add(repo, RUN, "T1")
    inner = _nested_commit(place)
    commit_in(place, {"b.txt": "b\n", **({".gitignore": "sub/\n"} if ignored else {})})
    assert ("sub" in git(place, "ls-files")) is not ignored
    assert isinstance(land(repo, RUN, "T1"), Merged)
    assert not worktrees.remove(repo, RUN, "T1")
    assert git(place / "sub", "rev-parse", "HEAD") == inner


def _plan(task_id: str) -> Plan:
    return Plan.model_validate({"summary": "s", "tasks": [task(1) | {"id": task_id}]})


def test_control_an_id_of_few_characters_can_be_too_long_for_a_branch() -> None:
    with pytest.raises(BridgeError, match="too long"):
        worktrees.lane_branch(RUN, "\U0001f600" * 20)
    # The plan's check names it, so the manager is asked again before any lane starts.
    assert [p for p in problems(_plan("\U0001f600" * 20)) if "too long as a branch" in p]


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=70))
def test_every_id_the_plan_accepts_makes_a_branch_and_its_follow_ups_too(task_id: str) -> None:
    """An id the plan's check lets through but `component` refuses stops the driver at the
    task's start, and again at every `run --resume`: the run never ends."""
    if problems(_plan(task_id)):
        return
    tid = task_id.strip()
    for each in (tid, f"{tid}-fix{FOLLOW_UPS}"):
        worktrees.lane_branch(RUN, each)  # raises for a name too long


@pytest.mark.skipif(not jail.probe().ok, reason="no working wall here")
@pytest.mark.parametrize("walled", [True, False])
def test_a_landings_checks_write_into_no_other_lane(
    tmp_path: Path, walled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lane's script, run as the user's check on the merged tree, writes beside its
    checks worktree: into another lane's worktree and the run's lanes folder."""
    if not walled:
        monkeypatch.setattr(jail, "_known", jail.Wall("linux", False, why="a test"))
    repo = begun(tmp_path, FILES)
    other = worktrees.add(repo, RUN, "T2")
    script = "#!/bin/sh\necho planted > ../../+542/planted.txt\necho planted > ../../x.txt\n"
    commit_in(worktrees.add(repo, RUN, "T1"), {"check.sh": script})
    outcome = land(repo, RUN, "T1", checks=[spec("sh ./check.sh; true")])
    assert isinstance(outcome, Merged)
    planted = [p for p in (other / "planted.txt", other.parent / "x.txt") if p.exists()]
    assert planted == ([] if walled else [other / "planted.txt", other.parent / "x.txt"])


def test_control_a_rewritten_link_turns_the_lane_into_the_users_repository(
    tmp_path: Path,
) -> None:
    repo = begun(tmp_path, FILES)
    place = worktrees.add(repo, RUN, "T1")
    (place / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    assert git(place, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert locate(place).git_dir == (repo / ".git").resolve()


def test_a_resumed_lane_works_on_its_own_branch_whatever_its_link_says(tmp_path: Path) -> None:
    """A lane's implementer points its worktree's `.git` at the user's repository (or another
    lane's): the resumed lane's rounds driver would commit onto that branch."""
    repo = begun(tmp_path, FILES)
    place = worktrees.add(repo, RUN, "T1")
    worktrees.add(repo, RUN, "T2")
    for n, target in enumerate((repo / ".git", *(repo / ".git" / "worktrees").iterdir())):
        (place / ".git").unlink()
        if n:
            (place / ".git").write_text(f"gitdir: {target}\n")
        else:  # a link to the user's git folder: git takes it as the worktree's own
            (place / ".git").symlink_to(target)
        assert worktrees.add(repo, RUN, "T1") == place
        assert (
            git(place, "symbolic-ref", "HEAD") == f"refs/heads/{worktrees.lane_branch(RUN, 'T1')}"
        )


def test_control_one_argument_too_long_never_starts_a_process() -> None:
    with pytest.raises(OSError, match="too long"):
        subprocess.run([sys.executable, "-c", "pass", "x" * 200_000], check=False)


@pytest.mark.parametrize("char", ["x", "\U0001f600"])
def test_a_task_of_any_size_makes_a_lane_that_starts(char: str) -> None:
    """A follow-up the manager wrote from a lane's diff (which can ask for anything) holds a
    step of 200,000 characters: the lane's contract is one argument of its command line, and
    one too long would stop the driver at that lane's start, at every resume."""
    big = Task.model_validate(task(1) | {"steps": [char * 200_000]})
    text = contract(big)
    done = subprocess.run([sys.executable, "-c", "import sys; print(len(sys.argv[1]))", text],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert int(done.stdout) == len(text) and text.startswith("Task T1: task number 1")
