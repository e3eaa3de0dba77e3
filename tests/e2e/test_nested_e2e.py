"""A repository the implementer makes inside the work tree, with a clean filter in its own
config, through the real CLIs (issue 33's worst route): walled, the implementer cannot run
the filter outside the wall itself, but the bridge's git (review, Stop, checks) and the
rounds driver's git (snapshot, commit) used to descend into the nested repository and run it
as the user. The filter's program writes a marker into a folder outside the wall; the marker
must never appear, the edit inside the nested repository must still reach the manager, and
the loop must end supervised.

The nested repository keeps its git directory in `.inner-store` (a `.git` file points there),
so the plant does not depend on which `.git` paths the wall protects.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from autopilot_codex.hosts.claude.boundary import boundary_settings
from autopilot_codex.wall import WallSpec, check_wall_prereqs
from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import LAUNCHER, ROOT, Autopilot
from .claude_cli import DEFAULT_MODEL, build_env, git
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse
from .fake_codex_model import FakeCodexModel, Patch, Shell
from .test_rounds_codex_e2e import Rounds, explain
from .test_rounds_codex_e2e import ap as ap  # noqa: F401 (fixture)
from .test_rounds_codex_e2e import rounds as rounds  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e

EDIT = "NESTED-EDIT-5521"


@pytest.fixture(autouse=True)
def _sandbox_tools() -> None:
    prereqs = check_wall_prereqs()
    if not prereqs.ok:
        pytest.skip(f"the hosts' sandbox needs {', '.join(prereqs.missing)} (fix: {prereqs.fix})")


def evil(outside: Path) -> str:
    """The filter's program: a trace outside the wall, then the content passed through."""
    return f'#!/bin/sh\necho "ran: $0 $*" >> {outside}/ran\ncat\n'


# Make `inner/` a repository whose config names the filter for every file, commit in it,
# then edit it so any status inside would clean the file; `stage` adds it to the top index.
PLANT = (
    "chmod +x evil.sh && git init -q --separate-git-dir=.inner-store inner && cd inner"
    " && echo one > a.txt && echo '* filter=evil' > .gitattributes && git add -A"
    " && git -c user.name=i -c user.email=i@i commit -qm inner"
    ' && git config filter.evil.clean "$(cd .. && pwd)/evil.sh"'
    f" && echo {EDIT} > a.txt && cd .. && echo planted"
)


def outside_folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    return outside


def assert_never_ran_and_live(repo: Path, outside: Path) -> None:
    assert not (outside / "ran").exists(), (outside / "ran").read_text()
    # The control: the plant is in place, and the user's own git inside runs it.
    assert "evil.sh" in (repo / ".inner-store" / "config").read_text()
    subprocess.run(["git", "status"], cwd=repo / "inner", capture_output=True, check=False)
    assert (outside / "ran").exists()


def assert_not_committed(repo: Path) -> None:
    """No gitlink, and nothing of the nested repository's work tree, in the top index."""
    staged = git(repo, "ls-files", "--stage").splitlines()
    assert not [e for e in staged if e.startswith("160000") or "\tinner" in e], staged


def test_claude_in_session_walled_a_nested_filter_never_runs_under_the_bridge(
    claude: ClaudeRunner,
    git_repo: Path,
    home: Path,
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    outside = outside_folder(tmp_path)
    openai_fake.enqueue(plan_body(2), schema="Plan")
    done = ap.cli(
        "plan", "--review", "edit", "--check", "true", "write", "file1.txt",
        openai_url=openai_fake.base_url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    openai_fake.enqueue(*[review_body()] * 4, schema="Review")
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/evil.sh", "content": evil(outside)})],
        [ToolUse("Bash", {"command": PLANT + " && git add inner", "description": "nested"})],
        [ToolUse("Write", {"file_path": "{workdir}/file1.txt", "content": "one\n"})],
        [Text("Wrote file1.txt.")],
    ]
    spec = WallSpec(worktree=git_repo, state_home=ap.home, home=home)
    settings = json.dumps(boundary_settings(spec))
    run = claude(
        "Carry on with the plan",
        ROOT,
        extra_env=ap.env(openai_fake.base_url),
        extra_args=["--settings", settings],
    )
    assert run.ok, run.describe()
    assert "planted" in "\n".join(str(e) for e in run.events_of("user"))
    assert_never_ran_and_live(git_repo, outside)
    asked = "\n".join(r.prompt_text for r in openai_fake.requests[1:])
    assert EDIT in asked and "inside a nested repository" in asked
    assert ap.state()["status"] == "done"
    assert not (ap.home / "logs" / "bridge.log").exists()


def test_claude_rounds_walled_a_nested_filter_never_runs_under_the_driver(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    outside = outside_folder(tmp_path)
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/evil.sh", "content": evil(outside)})],
        [ToolUse("Bash", {"command": PLANT, "description": "nested"})],
        [ToolUse("Write", {"file_path": "{workdir}/feature.txt", "content": "one\n"})],
        [Text("Added feature.txt.\n::potter(ready)")],
        [ToolUse("Bash", {"command": f"echo {EDIT}-2 > inner/a.txt", "description": "edit"})],
        [Text("Every requirement checked against the files.\n::potter(exit)")],
    ]
    host_args = ["--plugin-dir", str(ROOT), "--model", DEFAULT_MODEL,
                 "--permission-mode", "bypassPermissions"]  # fmt: skip
    env = build_env(
        home=home,
        tmpdir=Path(tempfile.mkdtemp(prefix="cc-e2e-")),
        anthropic_url=fake_anthropic.url,
        extra_env={
            **ap.env("http://127.0.0.1:9/v1"),
            "AUTOPILOT_CODEX_CLAUDE_CMD": str(claude_bin),
        },
    )
    proc = subprocess.run(
        [str(LAUNCHER), "-C", str(git_repo), "run", "add feature.txt", "--implementer", "claude",
         "--rounds", "3", "--json", "--timeout", "120", "--require-wall", "--check", "true",
         *(f"--host-arg={a}" for a in host_args)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    said = proc.stdout + proc.stderr + fake_anthropic.dump_log()
    assert_never_ran_and_live(git_repo, outside)
    # The driver committed the round's own files, never the nested repository.
    assert_not_committed(git_repo)
    assert "left as they are (nested repositories): inner" in proc.stderr, said
    # A repository the round made is a git directory with a config of its own: the driver's
    # comparison before the next round ends the run there, naming it, supervised to the end.
    record = json.loads(proc.stdout)
    assert (proc.returncode, record["status"]) == (1, "tampered"), said
    assert "inner/.git" in record["why"], said
    assert ap.state()["wall"] == "on" and ap.state()["status"] != "running"
    assert not (ap.home / "logs" / "bridge.log").exists()


def test_codex_rounds_a_nested_filter_never_runs_under_the_driver(
    rounds: Rounds, ap: Autopilot, tmp_path: Path, fake_codex: FakeCodexModel
) -> None:
    outside = outside_folder(tmp_path)
    plus = "".join(f"+{line}\n" for line in evil(outside).splitlines())
    fake_codex.script = [
        [Patch(f"*** Begin Patch\n*** Add File: evil.sh\n{plus}*** End Patch\n")],
        [Shell(PLANT)],
        [Patch("*** Begin Patch\n*** Add File: feature.txt\n+one\n*** End Patch\n")],
        "Added feature.txt.\n::potter(ready)",
        "Every requirement checked against the files.\n::potter(exit)",
    ]
    proc = rounds("add feature.txt", "--implementer", "codex", "--rounds", "3",
                  "--timeout", "120", "--require-wall", "--check", "true")  # fmt: skip
    assert proc.returncode == 1, explain(proc, fake_codex, ap.repo)
    assert_never_ran_and_live(ap.repo, outside)
    assert_not_committed(ap.repo)
    # The repository the round made ends the run before the next round, named (as above).
    record = rounds.record(proc)
    assert record["status"] == "tampered" and "inner/.git" in record["why"]
    assert ap.state()["wall"] == "on" and ap.state()["status"] != "running"
