"""Where the supervisor's own sandbox is missing, the user is told: `doctor` with the fix, and
`run`, `plan` and `ralph` beside the wall's own status. Where it is up, doctor says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.commands.doctor import render, run_checks
from autopilot_codex.commands.run import main as run_main
from autopilot_codex.sandbox import jail
from tests.conftest import cli, plan_body
from tests.fakes.openai_server import FakeOpenAI

MISSING = jail.Wall("linux", False, why="bubblewrap is not installed", fix="install bubblewrap")
SAID = "Supervisor: the supervisor's own git and checks run unwalled (bubblewrap is not installed)"


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "_known", MISSING)


@pytest.mark.skipif(not jail.probe().ok, reason="no working bubblewrap here")
def test_doctor_says_the_supervisor_s_sandbox_is_on(repo: Path) -> None:
    assert "ok   supervisor's sandbox: on, its own git and checks run in" in render(
        run_checks(str(repo))
    )


@pytest.mark.usefixtures("no_sandbox")
def test_doctor_says_it_is_off_with_the_fix(repo: Path) -> None:
    text = render(run_checks(str(repo)))
    assert (
        "--   supervisor's sandbox: off, the supervisor's own git and checks run unwalled "
        "(bubblewrap is not installed); fix: install bubblewrap"
    ) in text


@pytest.mark.usefixtures("no_sandbox")
def test_plan_says_it(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "s-1", "do", "it")
    assert code == 0 and out.startswith(SAID)


@pytest.mark.usefixtures("no_sandbox")
def test_ralph_says_it_before_the_prompt(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "-C", str(repo), "ralph", "--max-iterations", "3", "the prompt")
    assert code == 0 and SAID in out.split("the prompt")[0]


@pytest.mark.usefixtures("no_sandbox")
def test_run_says_it_in_its_first_lines(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_main(["--implementer", "claude", "--require-wall", "--cwd", str(repo), "goal"])
    assert capsys.readouterr().err.startswith(SAID)
