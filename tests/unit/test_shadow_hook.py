"""The shadow history at its edges: what a hook says when a snapshot cannot be taken, what it
waits for, which paths an edit stages, the state home inside the worktree, a lost race to
create the shadow, and a worker that fails."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autopilot_codex import hosts
from autopilot_codex.errors import BridgeError, LockTimeout
from autopilot_codex.hookio import HookInput
from autopilot_codex.shadow import background, history, hook, record, repo, snapshot
from autopilot_codex.store import Store
from tests.conftest import cli, git, make_repo

CLAUDE = hosts.get("claude")


def held(shadow: repo.Shadow) -> int:
    return repo.hold(shadow, 5)


def test_a_stop_says_what_was_lost_and_that_no_snapshot_could_start(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo")
    store = Store(work, lock_timeout=0.05)
    store.dir.mkdir(parents=True)
    (store.dir / record.PENDING).write_text(json.dumps([f"f{n}" for n in range(12)]))
    shadow = repo.at(work)
    fd = held(shadow)
    try:
        said = hook.on_hook(HookInput(event="Stop"), store, CLAUDE)
        hook.before_tool(work, "Bash", CLAUDE, 0.05)  # gives up waiting, says nothing
    finally:
        os.close(fd)
    assert "f9; and 2 more" in said
    assert "no snapshot of the work tree at this Stop" in said
    assert hook.lost_at_stop(store.dir)[-1] == "f11"
    assert hook.on_hook(HookInput(event="SessionStart"), store, CLAUDE) == ""
    hook.before_tool(work, "Read", CLAUDE, 0.05)


def test_at_round_tells_a_loss_and_a_failure(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo", {"README.md": "# demo\n", "kept.txt": "k\n"})
    store = Store(work)
    notes: list[str] = []
    (work / "draft.txt").write_text("draft\n")
    hook.at_round(store, "round 1 start", notes.append)
    (work / "draft.txt").unlink()
    hook.at_round(store, "round 1 end", notes.append)
    assert len(notes) == 1 and "draft.txt: deleted" in notes[0]

    broken = make_repo(tmp_path / "broken")
    shadow = repo.at(broken)
    shadow.dir.parent.mkdir(parents=True)
    shadow.dir.write_text("not a folder")
    hook.at_round(Store(broken), "round 2 start", notes.append)
    assert notes[-1].startswith("no snapshot of the work tree at round 2 start")
    fd = held(repo.at(work))
    try:
        said = hook.at_start(Store(work, lock_timeout=0.05), "plan")
    finally:
        os.close(fd)
    assert said.startswith("No snapshot of the work tree at the start")


def test_an_edit_stages_only_paths_inside_the_worktree(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo")
    shadow = repo.at(work)
    first = snapshot.take(shadow, "start")
    (tmp_path / "outside.txt").write_text("not the worktree's\n")
    same = snapshot.take(shadow, "edit", paths=[str(tmp_path / "outside.txt"), str(work)])
    assert not same.new and same.snapshot == first.snapshot
    with pytest.raises(BridgeError, match="is not inside"):
        snapshot.path_of(shadow, str(tmp_path / "outside.txt"))


def test_an_ignored_file_gone_before_it_is_measured_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = make_repo(tmp_path / "repo", {"README.md": "# demo\n", ".gitignore": "*.log\n"})
    (work / "a.log").write_text("kept\n")
    (work / "b.log").write_text("vanishes\n")
    real = Path.lstat

    def lstat(self: Path) -> os.stat_result:
        if self.name == "b.log":
            raise FileNotFoundError(self)
        return real(self)

    monkeypatch.setattr(Path, "lstat", lstat)
    taken = snapshot.take(repo.at(work), "start")
    listed = git(
        work, f"--git-dir={repo.at(work).dir}", "ls-tree", "--name-only", taken.snapshot.tree
    )
    assert listed.split() == [".gitignore", "README.md", "a.log"]


def test_a_state_home_inside_the_worktree_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = make_repo(tmp_path / "repo")
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(work / ".state"))
    shadow = repo.at(work)
    assert shadow.excluded() == [":(exclude,top).state"]
    taken = snapshot.take(shadow, "start")
    taken = snapshot.take(shadow, "again")
    listed = git(work, f"--git-dir={shadow.dir}", "ls-tree", "--name-only", taken.snapshot.tree)
    assert listed.split() == ["README.md"]


def test_a_lost_race_to_create_the_shadow_is_no_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = make_repo(tmp_path / "repo")
    shadow = repo.at(work)

    def rename(self: Path, target: Path) -> None:
        target.mkdir(parents=True)
        (target / "HEAD").write_text("ref: refs/heads/snapshots\n")
        raise OSError("the other writer won")

    monkeypatch.setattr(Path, "rename", rename)
    repo.create(shadow)
    assert repo.exists(shadow)
    other = repo.at(make_repo(tmp_path / "other"))
    monkeypatch.setattr(Path, "rename", lambda self, target: (_ for _ in ()).throw(OSError("no")))
    with pytest.raises(OSError, match="no"):
        repo.create(other)


def test_a_held_lock_times_out_and_a_failing_worker_exits_1(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo")
    shadow = repo.at(work)
    fd = held(shadow)
    try:
        with pytest.raises(LockTimeout):
            repo.hold(shadow, 0.05)
    finally:
        os.close(fd)
    lock = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT)
    job = {"worktree": str(tmp_path / "nowhere"), "home": str(tmp_path), "point": "x",
           "paths": None, "fd": lock, "notice": True}  # fmt: skip
    assert background.main([json.dumps(job)]) == 1
    with pytest.raises(OSError):
        os.fstat(lock)  # the worker let its lock go


def test_the_list_counts_what_a_snapshot_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = make_repo(tmp_path / "repo")
    shadow = repo.at(work)
    (work / "draft.txt").write_text("draft\n")
    snapshot.take(shadow, "start")
    (work / "draft.txt").unlink()
    snapshot.take(shadow, "after")
    code, out = cli(capsys, "-C", str(work), "restore", "--list")
    assert code == 0
    assert out.splitlines()[1].split()[-1] == "1"
    assert [s.meta.n for s in history.every(shadow)] == [2, 1]
    code, out = cli(
        capsys, "-C", str(work), "restore", history.every(shadow)[1].commit[:12], "--", "draft.txt"
    )
    assert code == 0 and (work / "draft.txt").read_text() == "draft\n"


def test_a_restore_removes_what_came_after_and_its_empty_folders_but_never_through_a_link(
    tmp_path: Path,
) -> None:
    from autopilot_codex.shadow.back import _remove, restore

    work = make_repo(tmp_path / "repo", {"README.md": "# demo\n", "mixed/old.txt": "old\n"})
    shadow = repo.at(work)
    snapshot.take(shadow, "start")
    (work / "mixed" / "new.txt").write_text("new\n")
    (work / "new" / "deeper").mkdir(parents=True)
    (work / "new" / "deeper" / "made.txt").write_text("made after\n")
    restore(shadow, "1")
    assert not (work / "new").exists()
    assert [p.name for p in (work / "mixed").iterdir()] == ["old.txt"]

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("not the worktree's\n")
    (work / "link").symlink_to(outside)
    _remove(shadow, "link/x.txt")
    _remove(shadow, "missing/x.txt")
    assert (outside / "x.txt").exists()


def test_damaged_files_of_the_loop_read_as_nothing(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "repo")
    store = Store(work)
    store.dir.mkdir(parents=True)
    (store.dir / record.PENDING).write_text("{not json")
    store.state_path.write_text("{not json")
    assert hook.lost_at_stop(store.dir) == []
    assert record.read_list(store.dir / record.PENDING) == []
    assert record._iteration(store) is None
    hook.before_tool(make_repo(tmp_path / "fresh"), "Bash", CLAUDE, 0.05)  # no shadow yet


def test_an_unborn_branch_and_odd_ref_files_are_read_as_far_as_they_go(tmp_path: Path) -> None:
    from autopilot_codex.gitrepo.runner import Location
    from autopilot_codex.shadow import refs

    work = tmp_path / "unborn"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "draft.txt").write_text("draft\n")
    shadow = repo.at(work)
    snapshot.take(shadow, "start")
    (work / "draft.txt").unlink()
    assert snapshot.take(shadow, "after").lost == (
        "draft.txt: deleted, with changes no commit holds",
    )

    fake = tmp_path / "fake-git"
    (fake / "logs" / "refs").mkdir(parents=True)
    (fake / "logs" / "refs" / "stash").write_text(
        "short line\n" + "0" * 40 + " " + "a" * 40 + " x\tmsg\n"
    )
    assert refs.stash_entries(Location(tmp_path, fake, fake)) == (("a" * 40, "msg"),)


def test_a_tool_that_can_change_files_waits_for_the_snapshot_being_written(
    tmp_path: Path,
) -> None:
    import threading

    work = make_repo(tmp_path / "repo")
    shadow = repo.at(work)
    fd = held(shadow)
    order: list[str] = []

    def writer_done() -> None:
        order.append("snapshot written")
        os.close(fd)

    timer = threading.Timer(0.3, writer_done)
    timer.start()
    hook.before_tool(work, "Bash", CLAUDE, 30)
    order.append("tool runs")
    timer.join()
    assert order == ["snapshot written", "tool runs"]
