"""`run --lanes 2` with the real Codex CLI in each lane (fake Responses API, each lane answered
its own script by its worktree) and the fake OpenAI server as the manager: two independent
tasks run at once and both merge; the user's branch fast-forwards."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from autopilot_codex.commands import install
from autopilot_codex.lanes.names import component
from tests.conftest import review_body, task
from tests.fakes.keyed import Keyed
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import Autopilot
from .claude_cli import git
from .fake_codex_model import FakeCodexModel, Turn
from .netns_relay import UnixToTcp
from .test_lanes_e2e import LANE, merged_at_once
from .test_rounds_codex_e2e import Rounds, add, explain

pytestmark = pytest.mark.e2e


@dataclass
class Lanes(Rounds):
    """`run` as `Rounds` runs it, with a manager: the lanes driver's (its lanes have none)."""

    manager_url: str = ""

    def env(self, relay: UnixToTcp) -> dict[str, str]:
        return {**super().env(relay), "OPENAI_BASE_URL": self.manager_url}


def work(task_id: str) -> list[Turn]:
    """One lane: a round that adds its file (the driver commits it), then a verifier round."""
    return [
        [add(f"{task_id}.txt", task_id)],
        f"Added {task_id}.txt.\n::potter(ready)",
        "Every requirement checked against the files.\n::potter(exit)",
    ]


def test_two_independent_tasks_run_at_once_and_merge_through_real_codex_lanes(
    codex_bin: Path,
    ap: Autopilot,
    home: Path,
    codex_home: Path,
    fake_codex: FakeCodexModel,
) -> None:
    ids = ["T1", "T2"]
    keyed = Keyed({component(t): work(t) for t in ids}, LANE, meet=2)
    fake_codex.chooser = lambda raw, _headers: keyed(raw)
    user_sha = git(ap.repo, "rev-parse", "HEAD").strip()
    with FakeOpenAI() as manager:
        tasks = [task(n, depends_on=[]) for n in (1, 2)]
        manager.enqueue({"summary": "two", "tasks": tasks}, schema="Plan")
        manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
        lanes = Lanes(codex_bin, ap, home, codex_home, fake_codex, manager.base_url)
        proc = lanes("write two files", "--implementer", "codex", "--manager", "openai",
                     "--lanes", "2", "--timeout", "90")  # fmt: skip
    why = explain(proc, fake_codex, ap.repo) + f"\nmissed meeting: {keyed.missed}"
    assert proc.returncode == 0, why
    merged_at_once(ap, json.loads(proc.stdout), ids, user_sha)
    # Each lane answered from its own script: two requests for the implementing round (the
    # patch, then its summary), one for the verifier.
    assert {k: len(v) for k, v in keyed.asked.items()} == {component(t): 3 for t in ids}


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Autopilot:
    """The hooks for Codex installed (`install codex --user`), as the rounds' tests have them."""
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    return Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
