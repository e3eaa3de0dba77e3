"""The shadow history through the hooks (issue 34): each of the five destructive git forms an
implementer can run is noticed at the next Stop and undone by `restore`, every byte back."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from autopilot_codex.shadow import repo as shadow_repo
from tests.conftest import Hook, cli, git, make_repo, payload

FORMS = {
    "read-tree": "git read-tree -u --reset HEAD",
    "checkout": "git checkout HEAD -- $(git ls-files)",
    "stash-drop": "git stash && git stash drop",
    "update-ref": "git update-ref -d refs/heads/feature",
    "rm-untracked": "git ls-files -o | xargs rm",
}
# What each form destroys, as the Stop names it.
NAMED = {
    "read-tree": "README.md",
    "checkout": "README.md",
    "stash-drop": "README.md",
    "update-ref": "refs/heads/feature",
    "rm-untracked": "notes/todo.txt",
}
EDITED = b"# demo\nan edit no commit holds \xe2\x9c\x93\n"
UNTRACKED = b"todo: \x00binary too\n"
SECRET = b"TOKEN=local-only\n"


def user_work(repo: Path) -> str:
    """Uncommitted edits, an untracked file, a small ignored one, a branch only it holds."""
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "feature.txt").write_text("only on feature\n")
    git(repo, "add", "feature.txt")
    git(repo, "commit", "-q", "-m", "feature work")
    feature = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    (repo / ".gitignore").write_text(".env\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    (repo / "README.md").write_bytes(EDITED)
    (repo / "notes").mkdir()
    (repo / "notes" / "todo.txt").write_bytes(UNTRACKED)
    (repo / ".env").write_bytes(SECRET)
    return feature


def start_loop(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "work", "on")
    assert code == 0, out
    settle(repo)  # as the first tool call's PreToolUse would


def bash(repo: Path, hook: Hook, command: str) -> dict[str, Any]:
    """One Bash call as the host makes it: PreToolUse (which waits for the snapshot still
    being written), the command, PostToolUse (which starts the next)."""
    pre = hook(
        "PreToolUse", payload("PreToolUse", repo, tool_name="Bash", tool_input={"command": command})
    )
    assert pre.code == 0, pre.stderr
    settle(repo)  # should the rails ever deny the command: the test is the shadow's
    subprocess.run(command, shell=True, cwd=repo, check=True, capture_output=True)
    run = hook(
        "PostToolUse",
        payload("PostToolUse", repo, tool_name="Bash", tool_input={"command": command}),
    )
    assert run.code == 0, run.stderr
    return run.json


def settle(repo: Path) -> None:
    shadow_repo.settle(shadow_repo.at(repo), 60)


def prune_everything(repo: Path) -> None:
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_destructive_form_is_noticed_and_undone(
    form: str, tmp_path: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    feature = user_work(repo)
    start_loop(repo, capsys)
    assert hook("UserPromptSubmit", payload("UserPromptSubmit", repo, prompt="go")).code == 0
    bash(repo, hook, FORMS[form])
    stop = hook("Stop", payload("Stop", repo)).json
    told = stop.get("systemMessage", "")
    assert "work vanished" in told and NAMED[form] in told, stop
    prune_everything(repo)
    snapshot = re.search(r"in snapshot (\d+)", told)
    assert snapshot is not None

    code, out = cli(capsys, "-C", str(repo), "restore", snapshot.group(1))

    assert code == 0, out
    assert (repo / "README.md").read_bytes() == EDITED
    assert (repo / "notes" / "todo.txt").read_bytes() == UNTRACKED
    assert (repo / ".env").read_bytes() == SECRET
    assert git(repo, "rev-parse", "refs/heads/feature") == feature
    assert git(repo, "show", "feature:feature.txt") == "only on feature"
    ledger = (tmp_path / "state-home").rglob("events.jsonl")
    assert any('"work.lost"' in p.read_text() for p in ledger)


def test_a_restore_is_undone_by_the_snapshot_it_took_first(
    repo: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    user_work(repo)
    start_loop(repo, capsys)
    (repo / "README.md").write_text("the implementer's later work\n")
    (repo / "new.txt").write_text("made after the start\n")
    bash(repo, hook, "true")
    hook("Stop", payload("Stop", repo))

    code, out = cli(capsys, "-C", str(repo), "restore", "1")
    assert code == 0, out
    assert (repo / "README.md").read_bytes() == EDITED
    assert not (repo / "new.txt").exists()
    undo = re.search(r"restore (\d+)` undoes this", out)
    assert undo is not None

    code, out = cli(capsys, "-C", str(repo), "restore", undo.group(1))
    assert code == 0, out
    assert (repo / "README.md").read_text() == "the implementer's later work\n"
    assert (repo / "new.txt").read_text() == "made after the start\n"


def test_one_path_comes_back_alone(
    repo: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    user_work(repo)
    start_loop(repo, capsys)
    (repo / "README.md").write_text("later\n")
    (repo / "notes" / "todo.txt").write_text("later too\n")
    bash(repo, hook, "true")
    hook("Stop", payload("Stop", repo))

    code, out = cli(capsys, "-C", str(repo / "notes"), "restore", "1", "--", "todo.txt")

    assert code == 0, out
    assert (repo / "notes" / "todo.txt").read_bytes() == UNTRACKED
    assert (repo / "README.md").read_text() == "later\n"


def test_restore_refuses_mid_turn_unless_forced(
    repo: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start_loop(repo, capsys)
    hook("UserPromptSubmit", payload("UserPromptSubmit", repo, prompt="go"))
    (repo / "README.md").write_text("mid-turn\n")
    bash(repo, hook, "true")

    code, out = cli(capsys, "-C", str(repo), "restore", "1")
    assert code == 1
    assert "mid-turn" in out
    assert (repo / "README.md").read_text() == "mid-turn\n"

    code, out = cli(capsys, "-C", str(repo), "restore", "1", "--force")
    assert code == 0, out
    assert (repo / "README.md").read_text() == "# demo\n"


def test_the_list_names_point_files_and_iteration(
    repo: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "-C", str(repo), "restore", "--list")
    assert (code, out.strip()) == (0, "No snapshots here yet: a loop keeps them from its start.")
    start_loop(repo, capsys)
    (repo / "a.txt").write_text("a\n")
    bash(repo, hook, "touch a.txt")
    git(repo, "branch", "gone")
    bash(repo, hook, "git branch -D gone")

    code, out = cli(capsys, "-C", str(repo), "restore", "--list")

    lines = out.strip().splitlines()
    assert lines[0].split() == ["ID", "TIME", "POINT", "FILES", "ITERATION", "LOST"]
    assert lines[-1].split()[0] == "1" and "ralph" in lines[-1]
    assert "PostToolUse Bash" in lines[1]
    code, out = cli(capsys, "-C", str(repo), "restore", "99", "--force")
    assert code == 1 and "no snapshot '99'" in out


def test_status_watch_and_the_report_show_what_vanished(
    repo: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.commands.watch import row_of, table
    from autopilot_codex.loopfiles import load
    from autopilot_codex.paths import project_dir
    from autopilot_codex.report.timeline import build

    user_work(repo)
    start_loop(repo, capsys)
    bash(repo, hook, FORMS["rm-untracked"])
    hook("Stop", payload("Stop", repo))

    code, out = cli(capsys, "-C", str(repo), "status")
    assert code == 0 and "Work lost (" in out and "notes/todo.txt: deleted" in out
    assert "`autopilot-codex restore 1`" in out
    row = row_of(project_dir(repo).name, project_dir(repo), now=0.0, silence_s=1e9)
    assert row.lost == 2  # notes/todo.txt and .env
    rendered = io.StringIO()
    Console(file=rendered, width=200).print(table([row]))
    assert "WORK LOST: 2" in rendered.getvalue()
    entries = [e for e in build(load(project_dir(repo))) if e.title.startswith("work lost")]
    assert entries and entries[0].ok is False and "notes/todo.txt" in entries[0].detail
