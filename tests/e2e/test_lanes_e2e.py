"""`run --lanes 2` with the real Claude Code CLI in each lane (fake Anthropic API) and the fake
OpenAI server as the manager: a task that depends on another runs in its own worktree from the
integration head after the first merged; both land through the queue and the user's branch
fast-forwards. (The scripted model answers in order, so the tasks run one after the other; the
lanes' overlap is proven with the scripted host in tests/integration/test_lanes.py.)"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import review_body, task
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import LAUNCHER, Autopilot
from .claude_cli import DEFAULT_MODEL, build_env, git
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e


def work(task_id: str) -> list[list[Text | ToolUse]]:
    """One lane: a round that writes and commits its file, then a verifier round."""
    command = f"printf '{task_id}\\n' > {task_id}.txt && git add {task_id}.txt && git commit -qm 'add {task_id}'"
    return [
        [ToolUse("Bash", {"command": command})],
        [Text(f"Wrote {task_id}.txt.\n::potter(ready)")],
        [Text("Every requirement checked against the files.\n::potter(exit)")],
    ]


def test_a_dependent_task_lands_after_its_dependency_through_real_claude_lanes(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    fake_anthropic.script = [*work("T1"), *work("T2")]
    with FakeOpenAI() as manager:
        tasks = [task(1, depends_on=[]), task(2, depends_on=["T1"])]
        manager.enqueue({"summary": "two", "tasks": tasks}, schema="Plan")
        manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
        env = build_env(
            home=home,
            tmpdir=Path(tempfile.mkdtemp(prefix="cc-e2e-")),
            anthropic_url=fake_anthropic.url,
            extra_env={
                **ap.env(manager.base_url),
                "AUTOPILOT_CODEX_CLAUDE_CMD": str(claude_bin),
                "ANTHROPIC_MODEL": DEFAULT_MODEL,
            },
        )
        proc = subprocess.run(
            [
                str(LAUNCHER),
                "-C",
                str(git_repo),
                "run",
                "write the two files",
                "--implementer",
                "claude",
                "--manager",
                "openai",
                "--lanes",
                "2",
                "--json",
                "--timeout",
                "90",
            ],  # fmt: skip
            capture_output=True,
            text=True,
            env=env,
            timeout=400,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr + fake_anthropic.dump_log()
    record = json.loads(proc.stdout)
    assert [(t["id"], t["state"]) for t in record["tasks"]] == [("T1", "merged"), ("T2", "merged")]
    assert record["manager_calls"] == 3
    # Every scripted turn went to a real `claude -p` of a lane: two rounds a task.
    assert len(fake_anthropic.main_requests()) == 6, fake_anthropic.dump_log()
    assert git(git_repo, "log", "--format=%s", "-n", "5").count("add T") == 2
    assert (git_repo / "T1.txt").read_text() == "T1\n"
    assert (git_repo / "T2.txt").read_text() == "T2\n"
