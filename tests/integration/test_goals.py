"""A goal reaches the manager whole, or is refused at plan time; a misspelt option is not
swallowed into the goal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import (
    edit_payload,
    payload,
    plan_body,
    review_body,
    run_hook_inproc,
    run_launcher,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI

LAST = "R-LAST: the exporter must also write a SHA-256 manifest next to every archive."


def long_goal(length: int = 6_440) -> str:
    """A spec of numbered requirements whose very last one must not be lost."""
    room = length - len(LAST) - 1
    lines = [
        f"R{n:03d}: the exporter handles case {n} and its tests cover it."
        for n in range(1, room // 40)
    ]
    head = "\n".join(lines)[:room]
    return head + "." * (room - len(head)) + "\n" + LAST


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_a_long_goal_reaches_every_manager_call_whole(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    goal = long_goal()
    assert len(goal) == 6_440
    spec = tmp_path / "spec.md"
    spec.write_text(goal)
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "--goal-file", str(spec), "--session-id", "s")
    assert code == 0, out
    assert LAST in manager.requests_for(schema="Plan")[0].prompt_text
    assert json.loads((project_dir(repo) / "state.json").read_text())["goal"] == goal
    # The hooks' calls carry it too: a review of an edit, then the verdict at a Stop.
    (repo / "file1.txt").write_text("one\n")
    manager.enqueue(review_body("approve"), schema="Review")
    run_hook_inproc("PostToolUse", edit_payload(repo, session="s"), capsys, monkeypatch)
    manager.enqueue(verdict_body(), schema="Verdict")
    run_hook_inproc("Stop", payload("Stop", repo, session="s"), capsys, monkeypatch)
    assert LAST in manager.requests_for(schema="Review")[0].prompt_text
    assert LAST in manager.requests_for(schema="Verdict")[0].prompt_text


def test_a_goal_too_long_for_the_prompt_is_refused_before_any_call(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / "spec.md"
    spec.write_text(long_goal(20_000))
    code, out = run(capsys, "-C", str(repo), "plan", "--goal-file", str(spec))
    assert code == 1
    assert "the goal is 20,000 characters; at most 15,000 fit" in out
    assert manager.requests == []
    assert not (project_dir(repo) / "state.json").exists()


def test_a_goal_from_stdin(repo: Path, manager: FakeOpenAI) -> None:
    goal = long_goal()
    manager.enqueue(plan_body(), schema="Plan")
    result = run_launcher(["-C", str(repo), "plan", "-"], stdin=goal.encode())
    assert result.code == 0, result.stdout + result.stderr
    assert LAST in manager.requests[0].prompt_text


def test_a_missing_goal_file_is_one_line(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "-C", str(repo), "plan", "--goal-file", "nope.md")
    assert code == 1 and "cannot read the goal file" in out and out.count("\n") == 1
    assert manager.requests == []


def test_status_abbreviates_a_long_goal_with_a_marker(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / "spec.md"
    spec.write_text(long_goal())
    manager.enqueue(plan_body(), schema="Plan")
    assert run(capsys, "-C", str(repo), "plan", "--goal-file", str(spec))[0] == 0
    out = run(capsys, "-C", str(repo), "status")[1]
    assert "characters cut]" in out and LAST not in out
    assert LAST in run(capsys, "-C", str(repo), "status", "--json")[1]


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("--budegt", "--budget"),
        ("--max-iteratons", "--max-iterations"),
        ("--reveiw", "--review"),
        ("--max-duraton", "--max-duration"),
    ],
)
def test_a_misspelt_option_is_refused_not_swallowed(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], typo: str, meant: str
) -> None:
    code, out = run(capsys, "-C", str(repo), "plan", "fix", "it", typo, "3")
    assert code == 1
    assert f"unknown option {typo}: did you mean {meant}?" in out
    assert manager.requests == []


def test_dashes_in_a_goal_are_kept(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "fix", "the", "--verbose", "flag")
    assert code == 0, out
    assert "fix the --verbose flag" in manager.requests[0].prompt_text


def test_double_dash_ends_the_options(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(
        capsys, "-C", str(repo), "plan", "--budget", "2", "--", "--budegt", "is", "a", "typo"
    )
    assert code == 0, out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["goal"] == "--budegt is a typo" and state["budget_usd"] == 2.0
