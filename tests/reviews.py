"""Waiting for the loop's background review: the PostToolUse hook answers at once and a
detached worker reviews, so a test that wants the review's outcome waits for the slot."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from autopilot_codex.paths import project_dir
from tests.fakes.openai_server import FakeOpenAI, LoggedRequest


def _state(worktree: Path) -> dict[str, Any]:
    return cast(
        "dict[str, Any]",
        json.loads((project_dir(worktree) / "state.json").read_text(encoding="utf-8")),
    )


def wait_reviews(worktree: Path, timeout: float = 30.0) -> dict[str, Any]:
    """The state once no manager call is in flight (the worker freed the slot)."""
    deadline = time.monotonic() + timeout
    while True:
        state = _state(worktree)
        if state.get("inflight") is None:
            return state
        if time.monotonic() > deadline:
            raise AssertionError(
                f"a review was still in flight after {timeout}s: {state['inflight']}"
            )
        time.sleep(0.05)


def wait_shadow(worktree: Path, timeout: float = 120.0) -> None:
    """Once no shadow snapshot is being written for this worktree (its worker holds the lock)."""
    from autopilot_codex.fileio import acquire

    lock = project_dir(worktree) / "shadow.lock"
    if not lock.exists():
        return
    fd = os.open(lock, os.O_RDWR)
    try:
        acquire(fd, timeout)
    finally:
        os.close(fd)


def wait_inflight(worktree: Path, timeout: float = 30.0) -> dict[str, Any]:
    """The in-flight slot, once a worker holds it and has started its call."""
    deadline = time.monotonic() + timeout
    while True:
        slot = _state(worktree).get("inflight")
        if slot is not None and slot.get("reserved_usd", 0) > 0:
            return cast("dict[str, Any]", slot)
        if time.monotonic() > deadline:
            raise AssertionError(f"no review started within {timeout}s")
        time.sleep(0.02)


def review_requests(manager: FakeOpenAI) -> list[LoggedRequest]:
    """The manager requests that reviewed a diff, in order: a background or commit review,
    or a Stop's folded review-and-verdict call (schema `Judgement`)."""
    return [r for r in manager.requests if r.schema_name in ("Review", "Judgement")]


def verdict_requests(manager: FakeOpenAI) -> list[LoggedRequest]:
    """The manager requests that judged a Stop: a verdict alone or folded with its review."""
    return [r for r in manager.requests if r.schema_name in ("Verdict", "Judgement")]


def unfolded(manager: FakeOpenAI) -> list[LoggedRequest]:
    """The manager's requests as the calls they stand for: a folded `Judgement` stands for a
    review followed by a verdict. Whether a Stop folds depends on whether the edit's background
    review had claimed the loop's slot before the Stop came, which is the machine's timing."""
    calls: list[LoggedRequest] = []
    for request in manager.requests:
        if request.schema_name == "Judgement":
            calls += [request, request]
        else:
            calls.append(request)
    return calls


def unfolded_schemas(manager: FakeOpenAI) -> list[str | None]:
    """The schema of each call `unfolded` lists, a `Judgement` read as `Review`, `Verdict`."""
    names: list[str | None] = []
    for request in manager.requests:
        names += (
            ["Review", "Verdict"] if request.schema_name == "Judgement" else [request.schema_name]
        )
    return names


def review_prompt_of_hidden_edit(
    repo: Path, manager: FakeOpenAI, hide: Callable[[Path, str], None], text: str
) -> str:
    """The review prompt after a loop is planned, README.md is edited to hold `text`, and
    `hide` forges the repository to hide the edit from git; what the manager was shown."""
    from autopilot_codex.cli import main
    from tests.conftest import edit_payload, plan_body, review_body, run_launcher

    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--review", "edit", "--session-id", "sess-1", "g"]) == 0
    (repo / "README.md").write_text(f"# {text}\n")
    hide(repo, "README.md")
    manager.enqueue(review_body(), schema="Review")
    hook = run_launcher(
        ["hook", "PostToolUse", "--host", "claude"],
        json.dumps(edit_payload(repo, "README.md")).encode(),
    )
    assert hook.code == 0, hook.stderr
    wait_reviews(repo)
    requests = manager.requests_for(schema="Review")
    assert requests, "no review was asked"
    return requests[0].prompt_text
