"""`plan` at its edges: goals given two ways at once, a plan whose task ids clash, and a
damaged state left by an earlier loop."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from autopilot_codex.manager import Outcome
from autopilot_codex.paths import project_dir
from tests.conftest import cli as run
from tests.conftest import plan_body, state_of, task
from tests.fakes.openai_server import FakeOpenAI

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T", bound="BaseModel")


def test_a_goal_in_words_and_in_a_file_is_refused_before_any_call(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / "spec.md"
    spec.write_text("build the exporter")
    code, out = run(capsys, "-C", str(repo), "plan", "--goal-file", str(spec), "and", "more")
    assert code == 1
    assert "give the goal either as words or with --goal-file, not both" in out
    assert manager.requests == [] and not (project_dir(repo) / "state.json").exists()


def test_a_goal_of_dash_after_args_stdin_is_refused(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("--budget 3 -\n"))
    code, out = run(capsys, "-C", str(repo), "plan", "--args-stdin")
    assert code == 1
    assert "`-` reads the goal from stdin, which --args-stdin already used" in out
    assert manager.requests == []


class Answers:
    """A manager whose plan is given: what a backend that skips the corrective retry (the
    `Backend` protocol does not require one) may hand `plan`."""

    def __init__(self, tasks: list[dict[str, object]]) -> None:
        self.tasks = tasks

    def ask(self, schema: type[T], instructions: str, prompt: str) -> Outcome[T]:
        value = schema.model_validate({"summary": "s", "tasks": self.tasks})
        return Outcome(value, cost_usd=0.01)


@pytest.mark.parametrize("ids", [["A", "A", "B"], ["T1", " ", "T3"]], ids=["twice", "blank"])
def test_a_plan_whose_task_ids_clash_or_are_blank_is_numbered_afresh(
    repo: Path, ids: list[str]
) -> None:
    from autopilot_codex.commands.plan import plan

    tasks: list[dict[str, object]] = [task(n, id=given) for n, given in enumerate(ids, 1)]
    out = plan(
        cwd=repo,
        goal="goal",
        overrides={},
        session_id=None,
        manager=lambda model, config: Answers(tasks),
    )
    saved = json.loads((project_dir(repo) / "plan.json").read_text())
    assert [t["id"] for t in saved["tasks"]] == ["T1", "T2", "T3"]
    assert [t["title"] for t in saved["tasks"]] == [f"task number {n}" for n in (1, 2, 3)]
    assert "Task T1 (1/3): task number 1" in out


def test_the_openai_manager_is_asked_again_for_clashing_ids(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    clash = {"summary": "s", "tasks": [task(1, id="A"), task(2, id="A")]}
    manager.enqueue(clash, plan_body(2), schema="Plan")
    assert run(capsys, "-C", str(repo), "plan", "goal")[0] == 0
    (_, retry) = manager.requests_for(schema="Plan")
    assert "repeats the id 'A'" in retry.prompt_text
    assert state_of(repo)["autopilot"]["current_task"] == "T1"


def test_a_unique_plan_keeps_the_managers_ids(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [task(1, id="parse"), task(2, id="print")]
    manager.enqueue({"summary": "s", "tasks": tasks}, schema="Plan")
    assert run(capsys, "-C", str(repo), "plan", "goal")[0] == 0
    assert state_of(repo)["autopilot"]["current_task"] == "parse"


def test_a_damaged_state_is_set_aside_and_a_new_plan_starts_clean(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    assert run(capsys, "-C", str(repo), "plan", "first")[0] == 0
    assert run(capsys, "-C", str(repo), "stop")[0] == 0
    folder = project_dir(repo)
    (folder / "state.json").write_text("{ this is not json")
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "second")
    assert code == 0 and "loop started" in out, out
    state = state_of(repo)
    assert (state["goal"], state["status"], state["generation"]) == ("second", "running", 1)
    (aside,) = folder.glob("state.json.corrupt-*")
    assert aside.read_text() == "{ this is not json"


def test_a_staged_rename_is_named_once_by_its_new_path(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import git

    git(repo, "mv", "README.md", "DOCS.md")
    (repo / "notes.txt").write_text("mine\n")
    manager.enqueue(plan_body(1), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "goal")
    assert code == 0, out
    assert "Note: uncommitted work here (DOCS.md, notes.txt) is part of" in out
