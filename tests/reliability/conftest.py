"""Fixtures shared by the reliability suite: a planned loop, in-process hooks, state readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import active_marker, project_dir
from tests.conftest import Hook as Hook
from tests.conftest import HookRun, plan_body
from tests.fakes.openai_server import FakeOpenAI

SESSION = "sess-1"


def start_loop(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    session: str | None = SESSION,
    tasks: int = 2,
) -> Path:
    """Plan a loop in `repo` through the real CLI, the fake manager answering the plan."""
    manager.enqueue(plan_body(tasks), schema="Plan")
    args = ["-C", str(repo), "plan", *extra]
    if session:
        args += ["--session-id", session]
    code = main([*args, "write", "the", "files"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    return repo


@pytest.fixture
def planned(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> Path:
    return start_loop(repo, manager, capsys)


def state_path(worktree: Path) -> Path:
    return project_dir(worktree) / "state.json"


def parse_state(text: str) -> Any:
    """Check a state file's text as the bridge would, without its side effects (no quarantine)."""
    from autopilot_codex.state_ranges import parse_state

    return parse_state(json.loads(text))


def state_of(worktree: Path) -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads(state_path(worktree).read_text(encoding="utf-8")))


def events_of(worktree: Path) -> list[dict[str, Any]]:
    path = project_dir(worktree) / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def marker_of(worktree: Path) -> Path:
    return active_marker(worktree)


def answer_of(run: HookRun) -> dict[str, Any]:
    """The hook's stdout as a JSON object ({} when empty); fails on anything else."""
    text = run.stdout.strip()
    if not text:
        return {}
    data = json.loads(text)
    assert isinstance(data, dict), text
    return data


def blocks(answer: dict[str, Any]) -> bool:
    """Whether an answer blocks a stop, blocks after a tool, or denies a tool call."""
    specific = answer.get("hookSpecificOutput")
    denied = isinstance(specific, dict) and specific.get("permissionDecision") in ("deny", "ask")
    return answer.get("decision") == "block" or answer.get("continue") is False or denied
