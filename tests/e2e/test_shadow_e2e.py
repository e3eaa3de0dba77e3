"""Nothing lost, through the real Claude Code CLI (issue 34): a scripted implementer runs the
five destructive git forms in its Bash tool, walled and unwalled; the Stop names every loss,
and `restore` brings back every byte, after the user's `git gc --prune=now`."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.hosts.claude.boundary import boundary_settings
from autopilot_codex.wall import WallSpec, check_wall_prereqs

from .autopilot_helpers import ROOT, Autopilot, hook_answers
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse, Turn

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
README = b"# e2e workdir\nthe user's edit, in no commit \xe2\x9c\x93\n"
TODO = b"the user's untracked notes\n"
A2 = "the implementer's own edit, never committed\n"
B3 = "b, edited and then stashed away\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path) -> Iterator[Autopilot]:
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def user_work(repo: Path) -> str:
    for name in ("a.txt", "b.txt"):
        (repo / name).write_text(f"{name} as committed\n")
    git(repo, "add", "a.txt", "b.txt")
    git(repo, "commit", "-q", "-m", "a and b")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "feature.txt").write_text("only on feature\n")
    git(repo, "add", "feature.txt")
    git(repo, "commit", "-q", "-m", "feature work")
    feature = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_bytes(README)
    (repo / "notes").mkdir()
    (repo / "notes" / "todo.txt").write_bytes(TODO)
    return feature


def bash(command: str) -> Turn:
    return [ToolUse("Bash", {"command": command, "description": "step"})]


def write(name: str, text: str) -> Turn:
    return [ToolUse("Write", {"file_path": "{workdir}/" + name, "content": text})]


SCRIPT = [
    bash("git read-tree -u --reset HEAD"),
    write("a.txt", A2),
    bash("git checkout HEAD -- $(git ls-files)"),
    write("b.txt", B3),
    bash("git stash && git stash drop"),
    bash("git update-ref -d refs/heads/feature"),
    bash("git ls-files -o | xargs rm"),
    [Text("Done.")],
]


def restore(ap: Autopilot, *args: str) -> None:
    done = ap.cli("restore", *args, openai_url=NO_MANAGER)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("walled", [False, True], ids=["unwalled", "walled"])
def test_the_five_destructive_forms_are_named_at_the_stop_and_undone(
    walled: bool,
    claude: ClaudeRunner,
    ap: Autopilot,
    fake_anthropic: FakeAnthropic,
    home: Path,
) -> None:
    extra: dict[str, Any] = {}
    if walled:
        prereqs = check_wall_prereqs()
        if not prereqs.ok:
            pytest.skip(f"the sandbox needs {', '.join(prereqs.missing)}")
        spec = WallSpec(worktree=ap.repo, state_home=ap.home, home=home)
        extra["extra_args"] = ["--settings", json.dumps(boundary_settings(spec))]
    feature = user_work(ap.repo)
    fake_anthropic.script = SCRIPT

    # Started from the terminal, claimed by the session's first prompt: the loop's own
    # slash command would run inside the wall.
    started = ap.cli(
        "ralph", "--max-iterations", "1", "Keep the notes tidy.", openai_url=NO_MANAGER
    )
    assert started.returncode == 0, started.stdout + started.stderr
    run = claude(
        "Keep the notes tidy.",
        ROOT,
        extra_env=ap.env(NO_MANAGER),
        timeout=180,
        **extra,
    )

    assert run.ok, run.describe()
    told = "\n".join(a.get("systemMessage", "") for a in hook_answers(run, "Stop"))
    lost = dict(re.findall(r"(?:: |; )([\w./-]+): [^;()]*\(in snapshot (\d+)\)", told))
    assert {"README.md", "a.txt", "b.txt", "refs/heads/feature", "notes/todo.txt"} <= set(lost), (
        told
    )
    assert (ap.repo / "README.md").read_bytes() != README
    git(ap.repo, "reflog", "expire", "--expire=now", "--all")
    git(ap.repo, "gc", "-q", "--prune=now")

    restore(ap, lost["README.md"])
    assert (ap.repo / "README.md").read_bytes() == README
    assert (ap.repo / "notes" / "todo.txt").read_bytes() == TODO
    assert git(ap.repo, "rev-parse", "refs/heads/feature") == feature
    assert git(ap.repo, "show", "feature:feature.txt") == "only on feature"
    restore(ap, lost["a.txt"], "--", "a.txt")
    assert (ap.repo / "a.txt").read_text() == A2
    restore(ap, lost["b.txt"], "--", "b.txt")
    assert (ap.repo / "b.txt").read_text() == B3
    assert "work.lost" in ap.event_names()
