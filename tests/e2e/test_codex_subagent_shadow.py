"""A Codex subagent's tool calls and the shadow history, on the real CLI.

A Codex subagent (`spawn_agent`) runs as a thread of its own. Its tool calls reach the
loop's hooks like its parent's; what it writes and then destroys must be kept by the shadow
and named at the Stop, as the parent's would be.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex.commands import install

from .autopilot_helpers import Autopilot
from .codex_fixtures import CodexRunner
from .fake_codex_model import Call, FakeCodexModel, Hold, Shell, Turn

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
PROMPT = "Append a line to notes.txt."


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Iterator[Autopilot]:
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def test_work_a_codex_subagent_writes_then_destroys_is_named_at_the_stop(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, git_repo: Path
) -> None:
    started = ap.cli(
        "ralph",
        "--host",
        "codex",
        "--max-iterations",
        "1",
        "--budget",
        "100",
        PROMPT,
        openai_url=NO_MANAGER,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    spawn = Call(
        "spawn_agent", {"task_name": "helper", "message": "Work."}, namespace="collaboration"
    )
    parent_done = Hold("Parent done.")
    threads: list[str] = []
    child_steps: list[Turn] = [
        Shell("printf 'the child s work\\n' > child-work.txt"),
        Shell("rm child-work.txt"),
        "CHILD DONE.",
    ]
    child_done = threading.Event()

    def chooser(raw: str, headers: dict[str, str]) -> Turn | None:
        thread = headers.get("thread-id", "")
        if thread not in threads:
            threads.append(thread)
        if thread != threads[0]:
            step = child_steps.pop(0) if child_steps else "CHILD DONE."
            if not child_steps:
                child_done.set()
            return step
        return spawn if '"function_call_output"' not in raw else parent_done

    def release() -> None:
        child_done.wait(90)
        # The child's last answer is on its way; the parent's Stop waits on the child's thread
        # no further, so give the parent its answer once the child has said it is done.
        parent_done.release.set()

    fake_codex.chooser = chooser
    releaser = threading.Thread(target=release, daemon=True)
    releaser.start()
    run = codex(PROMPT, extra_env=ap.env(NO_MANAGER), extra_args=["--enable", "multi_agent_v2"])
    parent_done.release.set()
    assert run.ok, run.describe()
    assert len(threads) == 2, threads
    assert not (git_repo / "child-work.txt").exists()
    lost = [e for e in ap.events() if e.get("event") == "work.lost"]
    assert any("child-work.txt" in " ".join(map(str, e.get("lost") or [])) for e in lost), (
        ap.event_names()
    )
