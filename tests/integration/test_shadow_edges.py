"""The shadow history's edges: a crash mid-snapshot, git's lock files a dead writer left, a
nested repository, the caps on ignored files, the edit hook's one path, `loops --prune`
asking first, and the verdict hearing what vanished."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.shadow import history, snapshot
from autopilot_codex.shadow import repo as shadow_repo
from autopilot_codex.shadow.snapshot import IGNORED_FILE_MAX
from tests.conftest import Hook, cli, edit_payload, git, payload, plan_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

CRASH = """
import os, signal, sys
from pathlib import Path
from autopilot_codex.shadow import repo, snapshot

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

snapshot._keep = die  # after the commit is written, before the ref moves
snapshot.take(repo.at(Path(sys.argv[1])), "doomed")
"""


def test_a_snapshot_cut_short_by_kill_9_is_never_the_newest(repo: Path, tmp_path: Path) -> None:
    shadow = shadow_repo.at(repo)
    first = snapshot.take(shadow, "start").snapshot
    (repo / "README.md").write_text("changed before the crash\n")
    crashed = subprocess.run([sys.executable, "-c", CRASH, str(repo)], check=False)
    assert crashed.returncode == -signal.SIGKILL
    assert history.latest(shadow) == first
    # What a dead git leaves: its lock files. Whoever holds the shadow's lock removes them.
    (shadow.dir / "index.lock").write_text("")
    (shadow.dir / "refs" / "heads" / "snapshots.lock").write_text("")

    after = snapshot.take(shadow, "next")

    assert after.new and after.snapshot.meta.n == 2
    assert [s.meta.n for s in history.every(shadow)] == [2, 1]
    fsck = subprocess.run(
        ["git", f"--git-dir={shadow.dir}", "fsck", "--connectivity-only", "--no-dangling"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stderr


def test_an_unchanged_tree_writes_no_snapshot(repo: Path) -> None:
    shadow = shadow_repo.at(repo)
    first = snapshot.take(shadow, "start")
    again = snapshot.take(shadow, "again")
    assert first.new and not again.new and again.snapshot == first.snapshot


def test_a_nested_repository_is_not_entered_and_the_rest_is_kept(repo: Path) -> None:
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "inside.txt").write_text("the nested repo's own\n")
    (repo / "mine.txt").write_text("kept\n")
    shadow = shadow_repo.at(repo)

    taken = snapshot.take(shadow, "start")

    listed = git(
        repo, f"--git-dir={shadow.dir}", "ls-tree", "-r", "--name-only", taken.snapshot.tree
    )
    assert "mine.txt" in listed.split()
    assert "inside.txt" not in listed


def test_ignored_files_are_kept_when_small_and_ignored_folders_never(repo: Path) -> None:
    (repo / ".gitignore").write_text(".env\nbig.bin\nbuild/\n")
    (repo / ".env").write_text("A=1\n")
    (repo / "big.bin").write_bytes(b"x" * (IGNORED_FILE_MAX + 1))
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("object\n")
    shadow = shadow_repo.at(repo)

    taken = snapshot.take(shadow, "start")

    listed = git(
        repo, f"--git-dir={shadow.dir}", "ls-tree", "-r", "--name-only", taken.snapshot.tree
    )
    assert sorted(listed.split()) == [".env", ".gitignore", "README.md"]


def test_an_edit_hook_stages_only_its_file(
    repo: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "work")
    shadow_repo.settle(shadow_repo.at(repo), 60)
    (repo / "file1.txt").write_text("written by the edit tool\n")
    (repo / "other.txt").write_text("written by nobody the hook heard of\n")

    assert hook("PostToolUse", edit_payload(repo)).code == 0
    # A tool that only looks snapshots nothing.
    hook("PostToolUse", payload("PostToolUse", repo, tool_name="Read", tool_input={}))

    shadow = shadow_repo.at(repo)
    shadow_repo.settle(shadow, 30)
    newest = history.every(shadow)[0]
    listed = git(repo, f"--git-dir={shadow.dir}", "ls-tree", "-r", "--name-only", newest.tree)
    assert newest.meta.point == "PostToolUse Write"
    assert "file1.txt" in listed.split() and "other.txt" not in listed.split()


def test_the_verdict_hears_what_vanished(
    repo: Path, hook: Hook, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "draft.txt").write_text("the user's draft\n")
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
    assert code == 0, out
    shadow_repo.settle(shadow_repo.at(repo), 60)
    (repo / "draft.txt").unlink()
    hook(
        "PostToolUse",
        payload("PostToolUse", repo, tool_name="Bash", tool_input={"command": "rm draft.txt"}),
    )
    manager.enqueue(verdict_body("continue"), schema="Verdict")

    stop = hook("Stop", payload("Stop", repo)).json

    assert "draft.txt" in stop.get("systemMessage", "")
    asked = manager.requests[-1].prompt_text
    assert "vanished this turn" in asked and "draft.txt" in asked


def test_loops_prune_asks_before_removing_snapshots(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cli(capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "work")
    cli(capsys, "-C", str(repo), "cancel")
    shadow = shadow_repo.at(repo)
    shadow_repo.settle(shadow, 60)
    assert shadow.dir.is_dir()

    code, out = cli(capsys, "loops", "--prune", "--older-than", "0s")
    assert code == 1 and "give --yes" in out
    assert shadow.dir.is_dir()

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    code, out = cli(capsys, "loops", "--prune", "--older-than", "0s")
    assert code == 1 and "nothing pruned" in out and shadow.dir.is_dir()

    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    code, out = cli(capsys, "loops", "--prune", "--older-than", "0s")
    assert code == 0 and "removed" in out and not shadow.dir.exists()


def test_loops_prune_yes_removes_without_asking(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "work")
    cli(capsys, "-C", str(repo), "cancel")
    shadow_repo.settle(shadow_repo.at(repo), 60)
    code, out = cli(capsys, "loops", "--prune", "--older-than", "0s", "--yes")
    assert code == 0 and "removed" in out
    assert not shadow_repo.at(repo).dir.exists()
    assert repo.is_dir()


def test_loops_prune_asks_nothing_of_a_loop_without_snapshots(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = isolated / "projects" / "old-loop-0123456789ab"
    folder.mkdir(parents=True)
    (folder / "state.json").write_text('{"status": "stopped", "style": "autopilot"}')
    code, out = cli(capsys, "loops", "--prune", "--older-than", "0s")
    assert code == 0 and "removed old-loop-0123456789ab" in out
    assert not folder.exists()
