"""The small commands where there is nothing to act on: `next` without a loop or a task, `ask`
without a question or a key, `ask --costs` outside a repository or beside a damaged state, and
`uninstall claude` where Claude Code's own command is not on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import Hook, cli, edit_state, payload, plan_body
from tests.fakes.openai_server import FakeOpenAI


def test_next_without_a_loop_or_a_task_says_so(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "-C", str(repo), "next")
    assert code == 0 and out.startswith("autopilot-codex: no loop in this worktree. Start one")
    manager.enqueue(plan_body(1), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "goal")[0] == 0
    edit_state(repo, status="paused", current_task=None, completed_tasks=["T1"])
    assert cli(capsys, "-C", str(repo), "next") == (
        0,
        "autopilot-codex: paused; no current task.\n",
    )


def test_ask_without_a_question_or_a_key_asks_nothing(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "goal")[0] == 0
    code, out = cli(capsys, "-C", str(repo), "ask", "   ")
    assert code == 1 and "give a question: autopilot-codex ask" in out
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # and no codex login to fall back on
    code, out = cli(capsys, "-C", str(repo), "ask", "which", "helper?")
    assert code == 1 and "autopilot-codex: no answer: OPENAI_API_KEY is not set" in out
    assert len(manager.requests) == 1  # the plan only


def test_ask_costs_outside_a_repository_and_beside_a_damaged_state_use_the_defaults(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, out = cli(capsys, "-C", str(plain), "ask", "--costs")
    assert code == 0 and "1 of 30 iterations" in out and "Budget:" not in out
    manager.enqueue(plan_body(1), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "--max-iterations", "9", "goal")[0] == 0
    assert "1 of 9 iterations" in cli(capsys, "-C", str(repo), "ask", "--costs")[1]
    (project_dir(repo) / "state.json").write_text("{ damaged")
    code, out = cli(capsys, "-C", str(repo), "ask", "--costs")
    assert code == 0 and "1 of 30 iterations" in out and "Budget:" not in out


def test_uninstall_claude_names_claude_codes_own_command_without_claude_on_path(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out = cli(capsys, "uninstall", "claude")
    assert code == 0
    assert "remove the plugin with `claude plugin uninstall autopilot-codex@autopilot-codex`" in out


def test_doctor_json_never_writes_the_wall(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "-C", str(repo), "doctor", "--json", "--wall")
    assert code == 1 and "--wall writes your settings; run it without --json" in out
    assert not (repo / ".claude").exists()


def test_ralph_over_a_damaged_state_sets_it_aside_and_starts_clean(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    assert cli(capsys, "-C", str(repo), "ralph", "--session-id", "s", "first")[0] == 0
    assert cli(capsys, "-C", str(repo), "cancel")[0] == 0
    (project_dir(repo) / "state.json").write_text("{ damaged")
    code, out = cli(capsys, "-C", str(repo), "ralph", "--session-id", "s", "second")
    assert code == 0, out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert (state["status"], state["ralph"]["prompt"], state["generation"]) == (
        "running",
        "second",
        1,
    )
    assert len(list(project_dir(repo).glob("state.json.corrupt-*"))) == 1


@pytest.mark.parametrize("budget", ["0", "-1", "nan"])
def test_ralph_refuses_a_budget_of_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str], budget: str
) -> None:
    code, out = cli(capsys, "-C", str(repo), "ralph", f"--budget={budget}", "go")
    assert code == 1 and f"--budget {budget} is not accepted" in out
    assert not (project_dir(repo) / "state.json").exists()


def test_a_ralph_state_without_its_record_is_said_so_and_blocks_no_stop(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    assert cli(capsys, "-C", str(repo), "ralph", "--session-id", "s", "go")[0] == 0
    edit_state(repo, own=None)
    code, out = cli(capsys, "-C", str(repo), "status")
    assert code == 0
    assert out.splitlines() == [
        "autopilot-codex: ralph running (no ralph record)",
        f"State: {project_dir(repo) / 'state.json'}",
    ]
    before = (project_dir(repo) / "state.json").read_text()
    assert hook("Stop", payload("Stop", repo, "s")).stdout == ""
    assert (project_dir(repo) / "state.json").read_text() == before


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf"])
def test_run_refuses_a_round_timeout_that_never_or_always_ends(
    repo: Path, capsys: pytest.CaptureFixture[str], timeout: str
) -> None:
    code, out = cli(
        capsys, "-C", str(repo), "run", "--timeout", timeout, "--implementer", "claude", "goal"
    )
    assert code == 1
    assert f"autopilot-codex run: --timeout {timeout} is not accepted: it must be above 0" in out
    assert not (project_dir(repo) / "state.json").exists()
