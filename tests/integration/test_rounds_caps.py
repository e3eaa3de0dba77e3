"""A run's one budget (issue 22): the manager's and the rounds' spend against `--budget`, the
rounds' tokens against `--max-tokens`, wall time against `--max-duration`, checked before each
round and before each manager call; `run --resume` with a cap (or `--rounds`) raised goes on
with the same goal, round count and rollout. Real git, the fake host, the fake OpenAI server;
only the clock is replaced."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from pytest_mock import MockerFixture

from autopilot_codex import meters
from autopilot_codex.cli import main as cli_main
from autopilot_codex.commands.run import main
from autopilot_codex.rounds import rollout
from tests.conftest import LAUNCHER, state_of, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.integration.test_rounds_driver import (
    EXIT,
    READY,
    Script,
    calls,
    drive,
    rollout_path,
    rounds_of,
)

START = 1_800_000_000.0
AGAIN = {"say": "Looked again.\n::potter(ready)"}


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backoff's wait is never waited for."""
    from autopilot_codex.rounds import driver

    monkeypatch.setattr(driver, "sleep", lambda _: None)


def work(n: int, **extra: Any) -> dict[str, Any]:
    """A round that changes a file (so the no-progress breaker stays quiet) and says go on."""
    return {"write": {f"part{n}.txt": f"{n}\n"}, "say": f"part {n} done", **extra}


def run_log(repo: Path) -> rollout.RunLog:
    log = rollout.last_run(rollout_path(repo))
    assert log is not None
    return log


def by_calls(mocker: MockerFixture, script: Path, seconds: dict[int, float]) -> None:
    """The clock, as a function of how many rounds the fake host has started."""

    def clock() -> float:
        counter = Path(f"{script}.count")
        n = int(counter.read_text()) if counter.exists() else 0
        return START + seconds.get(n, 5.0 * n)

    mocker.patch.object(meters, "clock", side_effect=clock)


# -- the budget: manager + rounds ------------------------------------------------------------


def test_the_budget_counts_the_managers_spend_and_a_raise_resumes_the_same_run(
    repo: Path, script: Script, manager: FakeOpenAI
) -> None:
    path = script([READY, EXIT, AGAIN, EXIT])
    # 100,000 input and 200 output tokens of gpt-6.2-sol: $0.202, more than the $0.15 budget
    # (whose $0.13 left covered the call's worst case when it was made).
    costly = Reply(body=verdict_body("continue"), input_tokens=100_000, output_tokens=200)
    manager.enqueue(costly, schema="Verdict")
    code, record = drive(repo, "--manager", "openai", "--budget", "0.15")
    assert (code, record["status"], record["rounds_used"]) == (2, "budget", 2)
    assert record["why"] == (
        "budget used up by manager spend: $0.22 of $0.15 (manager $0.20, rounds $0.02; $0.07 over)"
    )
    assert record["manager_usd"] == pytest.approx(0.202)
    assert record["rounds_usd"] == pytest.approx(0.02)
    assert state_of(repo)["status"] == "stopped_budget"
    assert [r.manager_done for r in rounds_of(repo)] == [None, False]
    assert rounds_of(repo)[-1].manager_usd == pytest.approx(0.202)
    run_id = record["run"]

    # Without a raise, resume names the flag; with one, the same run goes on.
    code, _ = drive(repo, "--resume")
    assert code == 1
    code, _ = drive(repo, "--resume", "--budget", "0.20")
    assert code == 1  # not above what was spent
    manager.enqueue(verdict_body("done"), schema="Verdict")
    code, record = drive(repo, "--resume", "--budget", "1", "--manager", "openai")
    assert (code, record["status"], record["run"]) == (0, "complete", run_id)
    assert record["rounds_used"] == 4
    assert record["manager_usd"] > 0.202  # the first run's manager spend is still counted
    log = run_log(repo)
    assert [r.budget_usd for r in log.raises] == [1.0] and log.header.budget_usd == 1.0
    assert "This is round 3 of at most 10." in calls(path)[2]["prompt"]


def test_resume_keeps_the_runs_manager_unless_another_is_given(
    repo: Path, script: Script, manager: FakeOpenAI
) -> None:
    script([READY, EXIT, AGAIN, EXIT, AGAIN, EXIT])
    costly = Reply(body=verdict_body("continue"), input_tokens=100_000, output_tokens=200)
    manager.enqueue(costly, schema="Verdict")
    code, record = drive(repo, "--manager", "openai", "--budget", "0.15")
    assert (code, record["status"]) == (2, "budget")
    assert run_log(repo).header.manager == "openai"
    # No --manager: the run's own goes on judging (one verdict, "continue").
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    code, record = drive(repo, "--resume", "--budget", "1", "--rounds", "4")
    assert (code, record["status"]) == (2, "round_limit"), record
    assert len(manager.requests_for(schema="Verdict")) == 2
    assert [r.manager_done for r in rounds_of(repo)] == [None, False, None, False]
    # Another given: it replaces the run's, and the next resume keeps it.
    code, record = drive(repo, "--resume", "--rounds", "6", "--manager", "none")
    assert (code, record["status"]) == (0, "complete")
    assert len(manager.requests_for(schema="Verdict")) == 2
    log = run_log(repo)
    assert (log.header.manager, log.raises[-1].manager) == ("none", "none")


def test_the_budget_refused_and_raised_through_the_cli(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([{**work(1), "cost": 0.05}, {**work(2), "cost": 0.05}, READY, EXIT])
    code, record = drive(repo, "--budget", "0.08")
    assert (code, record["status"]) == (2, "budget")
    assert "by total" not in record["why"] and "by rounds spend" in record["why"]
    capsys.readouterr()
    assert cli_main(["-C", str(repo), "run", "--resume", "--json"]) == 1
    err = capsys.readouterr().err
    assert "the last run ended at its budget; raise it to go on: run --resume --budget USD" in err
    assert cli_main(["-C", str(repo), "status"]) == 0
    out = capsys.readouterr().out
    assert "Spend: manager $0.00 · rounds $0.10 · total $0.10 of $0.08" in out
    assert "Next: autopilot-codex run --resume --budget USD (the same run goes on)" in out


# -- rounds: `--resume --rounds N` after the round limit -------------------------------------


def test_resume_with_more_rounds_after_the_round_limit(repo: Path, script: Script) -> None:
    path = script([work(1), work(2), READY, EXIT])
    code, record = drive(repo, "--rounds", "2")
    assert (code, record["status"], record["rounds_used"]) == (2, "round_limit", 2)
    handoff, run_id = record["handoff"], record["run"]
    code, _ = drive(repo, "--resume")  # refused: the round limit needs --rounds
    assert code == 1
    code, record = drive(repo, "--resume", "--rounds", "4")
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 4)
    assert (record["run"], record["handoff"], record["rounds"]) == (run_id, handoff, 4)
    prompts = [c["prompt"] for c in calls(path)]
    assert "This is round 3 of at most 4." in prompts[2]
    assert [r.round for r in rounds_of(repo)] == [1, 2, 3, 4]
    log = run_log(repo)
    assert log.end is not None and log.end.status == "complete"
    assert [r.rounds for r in log.raises] == [4]


def test_more_rounds_must_be_more_than_those_used(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([work(1), work(2)])
    assert drive(repo, "--rounds", "2")[0] == 2
    capsys.readouterr()
    assert drive(repo, "--resume", "--rounds", "2")[0] == 1
    assert "--rounds 2: the run has used 2; give more than that" in capsys.readouterr().err


# -- tokens: the rounds' own reports ---------------------------------------------------------


@pytest.mark.parametrize("source", ["flag", "environment", "config"])
def test_a_token_cap_from_each_source_ends_the_run_and_a_raise_resumes_it(
    repo: Path, script: Script, source: str, monkeypatch: pytest.MonkeyPatch, isolated: Path
) -> None:
    script([work(1), work(2), READY, EXIT])  # Codex rounds report 1100 tokens each
    args: tuple[str, ...] = ()
    if source == "flag":
        args = ("--max-tokens", "2000")
    elif source == "environment":
        monkeypatch.setenv("AUTOPILOT_CODEX_MAX_TOKENS", "2000")
    else:
        isolated.mkdir(parents=True, exist_ok=True)
        (isolated / "config.json").write_text(json.dumps({"max_tokens": 2000}))
    code, record = drive(repo, *args, host="codex")
    assert (code, record["status"], record["rounds_used"]) == (2, "tokens", 2)
    assert record["why"] == "token limit reached: 2200 of 2000 tokens (200 over)"
    assert state_of(repo)["status"] == "stopped_tokens"
    code, record = drive(repo, "--resume", "--max-tokens", "10000")
    assert (code, record["status"], record["tokens"]) == (0, "complete", 4400)


# -- time: before each round and before each manager call ------------------------------------


def test_a_20s_cap_ends_a_run_of_5s_rounds_at_the_cap(
    repo: Path, script: Script, mocker: MockerFixture
) -> None:
    path = script([work(n) for n in range(1, 7)])
    by_calls(mocker, path, {})  # 5 s per round
    code, record = drive(repo, "--max-duration", "20s")
    assert (code, record["status"], record["rounds_used"]) == (2, "duration", 4)
    assert record["why"] == "time limit reached: 20s of 20s (0s over)"
    assert state_of(repo)["status"] == "stopped_duration"
    # A raise goes on from the same run; what it was given is above the 20 s used.
    code, record = drive(repo, "--resume", "--max-duration", "30s")
    assert (code, record["status"], record["rounds_used"]) == (2, "duration", 6)


def test_no_manager_call_once_the_time_is_up(
    repo: Path, script: Script, manager: FakeOpenAI, mocker: MockerFixture
) -> None:
    path = script([READY, EXIT])
    by_calls(mocker, path, {0: 0.0, 1: 5.0, 2: 30.0})  # the verifier's round ends at 30 s
    code, record = drive(repo, "--manager", "openai", "--max-duration", "20s")
    assert (code, record["status"], record["rounds_used"]) == (2, "duration", 2)
    assert manager.requests == []
    last = rounds_of(repo)[-1]
    assert (last.manager_done, last.next) == (False, "duration")


def test_a_bad_duration_is_refused_before_any_round(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    path = script([READY, EXIT])
    assert drive(repo, "--max-duration", "soon")[0] == 1
    assert "--max-duration soon is not accepted" in capsys.readouterr().err
    assert not Path(f"{path}.calls.jsonl").exists()


# -- what status says while the run goes on ----------------------------------------------------


def test_status_during_a_run_shows_the_meters_and_the_projected_end(
    repo: Path, script: Script, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_PYTHON", sys.executable)
    shown = tmp_path / "status.txt"
    look = f"{shlex.quote(str(LAUNCHER))} status > {shlex.quote(str(shown))}"
    script(
        [
            {**work(1), "cost": 0.05},
            {**work(2), "cost": 0.05},
            {**work(3), "cost": 0.05, "shell": look},
            READY,
            EXIT,
        ]
    )
    code, _ = drive(repo, "--budget", "0.50")
    assert code == 0
    text = shown.read_text()
    assert "Rounds: 2/10" in text, text
    assert "Spend: manager $0.00 · rounds $0.10 · total $0.10 of $0.50" in text
    # $0.05 a round: $0.40 left lasts 8 more.
    assert "At this rate the budget lasts about 8 more rounds." in text
    assert "report no tokens" not in text  # the result event's usage
    assert "report no dollars" not in text


def test_codex_rounds_report_tokens_and_dollars_priced_by_the_bridge(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([READY, EXIT])  # Codex rounds report tokens; the bridge prices them
    out = io.StringIO()
    argv = ["g", "--implementer", "codex", "--budget", "1", "--cwd", str(repo)]
    assert main(argv, stdout=out) == 0
    assert "report no dollars" not in out.getvalue()
    capsys.readouterr()
    assert cli_main(["-C", str(repo), "status"]) == 0
    text = capsys.readouterr().out
    assert "report no dollars" not in text
    assert "rounds ~$0.03 · total ~$0.03 of $1.00" in text, text
    assert "Tokens: 2200 · time" in text
