"""`status` and `resume` on loops that are not simply running: the next step `status` names for
each way a loop ends, what `resume` refuses and why, and damaged files shown as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import edit_state, plan_body, state_of
from tests.fakes.openai_server import FakeOpenAI


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def planned(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> Path:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
    assert code == 0, out
    return repo


def next_line(capsys: pytest.CaptureFixture[str], repo: Path) -> str:
    code, out = cli(capsys, "-C", str(repo), "status")
    assert code == 0, out
    (line,) = [x for x in out.splitlines() if x.startswith("Next:")]
    return line


def test_status_names_the_cap_to_raise_for_each_way_a_loop_stops(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = planned
    edit_state(repo, status="stopped_iteration_limit", iteration=30)
    assert next_line(capsys, repo) == (
        "Next: resume with autopilot-codex resume --max-iterations 40, "
        "or plan a new goal with autopilot-codex plan <goal>"
    )
    edit_state(repo, status="stopped_tokens", iteration=3, max_tokens=1000, implementer_tokens=1500)
    assert "resume --max-tokens 3000," in next_line(capsys, repo)
    # A stop with no cap behind it (the user's): resume as it was.
    edit_state(repo, status="stopped", max_tokens=0)
    assert next_line(capsys, repo).startswith("Next: resume with autopilot-codex resume, or")
    edit_state(repo, status="done")
    assert next_line(capsys, repo) == "Next: plan a new goal with autopilot-codex plan <goal>"


def test_resume_refuses_a_finished_loop_and_a_reached_iteration_limit(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = planned
    edit_state(repo, status="stopped_iteration_limit", iteration=30)
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code == 1
    assert "the iteration limit 30 is reached (iteration 30)" in out
    assert "autopilot-codex resume --max-iterations N" in out
    # A limit that is still reached is refused the same way, naming the limit given.
    code, out = cli(capsys, "-C", str(repo), "resume", "--max-iterations", "30")
    assert code == 1 and "the iteration limit 30 is reached" in out
    assert state_of(repo)["status"] == "stopped_iteration_limit"
    code, out = cli(capsys, "-C", str(repo), "resume", "--max-iterations", "31")
    assert code == 0 and "loop resumed (was stopped_iteration_limit)" in out
    edit_state(repo, status="done")
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code == 1 and "the loop is done; plan a new goal with autopilot-codex plan" in out
    assert state_of(repo)["status"] == "done"


def test_resume_with_nothing_here_says_how_to_start(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "-C", str(repo), "resume", "--max-tokens", "5000")
    assert code == 0 and out.startswith("autopilot-codex: no loop in this worktree. Start one")
    assert not (project_dir(repo) / "state.json").exists()


def test_a_loop_resumed_after_its_last_task_is_told_no_task(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = planned
    edit_state(repo, status="paused", current_task=None, completed_tasks=["T1", "T2"])
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code == 0 and "loop resumed (was paused)." in out
    assert "Continue with" not in out and "Task T" not in out


def test_status_json_shows_a_damaged_state_as_it_is_without_repairing_it(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = project_dir(planned) / "state.json"
    state.write_text('{"status": "running", \n')
    code, out = cli(capsys, "-C", str(planned), "status", "--json")
    assert code == 0 and out == '{"status": "running", \n'
    assert state.read_text() == '{"status": "running", \n'


def test_status_of_a_rounds_run_with_a_damaged_rollout_still_answers(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.rounds.hold import hold

    rollout = project_dir(repo) / "rounds" / "rollout.jsonl"
    with hold(repo, "g", "run-0", 2) as held:
        rollout.parent.mkdir(parents=True, exist_ok=True)
        rollout.write_text("not a record\n" + json.dumps({"kind": "end", "run": "run-0"}) + "\n")
        code, out = cli(capsys, "-C", str(repo), "status")
        assert code == 0
        lines = out.splitlines()
        assert lines[0] == "autopilot-codex: rounds run running — g"
        # No meters from a rollout that does not parse: the line after is where it is.
        assert lines[1].startswith(f"Held by the run's driver; see {rollout}.")
        held.status = "interrupted"
    code, out = cli(capsys, "-C", str(repo), "status")
    assert f"Not running; see {rollout}. Next: `autopilot-codex run --resume`." in out
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code == 1
    said = "the last loop here was a rounds loop; start it again with autopilot-codex run --resume"
    assert said in out


def test_a_running_loop_takes_new_token_and_time_caps_at_once_and_says_which(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = planned
    code, out = cli(capsys, "-C", str(repo), "resume", "--max-tokens", "5000")
    assert code == 0
    assert out.strip() == (
        "autopilot-codex: the loop is running; new caps apply now (at most 5000 tokens)."
    )
    code, out = cli(capsys, "-C", str(repo), "resume", "--budget", "9", "--max-duration", "90m")
    assert code == 0
    assert out.strip() == (
        "autopilot-codex: the loop is running; new caps apply now (budget $9.00, at most 1h30m)."
    )
    state = state_of(repo)
    assert (state["max_tokens"], state["max_seconds"], state["budget_usd"]) == (5000, 5400, 9)
    # The ledger names every cap the user raised.
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    caps = [json.loads(x) for x in lines if json.loads(x)["event"] == "caps"]
    assert [(c["budget_usd"], c.get("max_tokens"), c.get("max_seconds")) for c in caps] == [
        (None, 5000, None),
        (9.0, None, 5400.0),
    ]
    # 0 lifts a cap, and is said so.
    code, out = cli(capsys, "-C", str(repo), "resume", "--max-tokens", "0", "--max-duration", "0")
    assert code == 0 and out.strip().endswith("new caps apply now (no token cap, no time cap).")
    assert (state_of(repo)["max_tokens"], state_of(repo)["max_seconds"]) == (0, 0)
