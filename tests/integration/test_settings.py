"""Every number a user can give is finite and in range, by any route; a hook ignores only the
one bad setting; the loop keeps what it was planned with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from autopilot_codex.cli import main
from autopilot_codex.config import ENV, RANGES, check, for_loop, load_config
from autopilot_codex.errors import BridgeError
from autopilot_codex.paths import project_dir
from autopilot_codex.store import Store
from tests.conftest import PLANTED_KEY, payload, plan_body, run_hook_inproc, verdict_body
from tests.fakes.openai_server import FakeOpenAI


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def start(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
    assert code == 0, out


def state_json(repo: Path) -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads((project_dir(repo) / "state.json").read_text()))


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "0", "-1", "1e309"])
def test_plan_refuses_a_budget_that_is_no_cap(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, out = run(capsys, "-C", str(repo), "plan", "build", "it", f"--budget={value}")
    assert code == 1
    assert out.count("\n") == 1, out
    assert f"--budget {value} is not accepted: budget_usd must be a number above 0" in out
    assert manager.requests == []
    assert not (project_dir(repo) / "state.json").exists()


@pytest.mark.parametrize("value", ["nan", "Infinity", "-5", "abc"])
def test_plan_refuses_a_bad_budget_from_the_environment(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    value: str,
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_BUDGET_USD", value)
    code, out = run(capsys, "-C", str(repo), "plan", "build", "it")
    assert code == 1
    assert f"AUTOPILOT_CODEX_BUDGET_USD={value} is not accepted" in out
    assert manager.requests == []


def test_plan_refuses_a_nan_in_the_config_file(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    # Python's json reads the non-standard NaN literal: the range check must catch it.
    (isolated / "config.json").write_text('{"budget_usd": NaN}')
    code, out = run(capsys, "-C", str(repo), "plan", "build", "it")
    assert code == 1
    assert "budget_usd=nan in" in out and "must be a number above 0" in out
    assert manager.requests == []


@pytest.mark.parametrize("name", sorted(RANGES))
@pytest.mark.parametrize("value", ["nan", "inf", "1e12", "-1"])
def test_every_numeric_setting_is_finite_and_in_range(name: str, value: str) -> None:
    with pytest.raises(BridgeError) as caught:
        load_config(environ={ENV[name]: value})
    assert str(caught.value).startswith(f"{ENV[name]}={value} is not accepted: {name} must be")


def test_a_whole_number_setting_refuses_a_fraction() -> None:
    with pytest.raises(BridgeError, match="max_iterations must be a number from 1 up to"):
        check("max_iterations", "2.5")
    assert check("max_iterations", "7") == 7


def test_resume_refuses_a_non_finite_or_negative_budget(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    assert run(capsys, "-C", str(repo), "stop")[0] == 0
    before = state_json(repo)
    for value in ("nan", "inf", "-1"):
        code, out = run(capsys, "-C", str(repo), "resume", f"--budget={value}")
        assert code == 1
        assert "must be a number above 0" in out and "used up" not in out
    assert state_json(repo)["status"] == "stopped"
    assert state_json(repo)["budget_usd"] == before["budget_usd"]


def test_a_hook_refuses_a_state_whose_budget_is_not_finite(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start(repo, manager, capsys)
    path = project_dir(repo) / "state.json"
    path.write_text(path.read_text().replace('"budget_usd":5.0', '"budget_usd":NaN'))
    calls = len(manager.requests)
    answer = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    assert answer.code == 0
    assert answer.json.get("decision") != "block"
    assert "budget_usd" in answer.stdout and "not a finite number" in answer.stdout
    assert len(manager.requests) == calls  # nothing spent on a loop without a cap
    assert not path.exists()  # moved aside: the loop is off


def test_a_hook_ignores_a_bad_budget_in_its_environment(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start(repo, manager, capsys)
    monkeypatch.setenv("AUTOPILOT_CODEX_BUDGET_USD", "Infinity")
    manager.enqueue(verdict_body(), schema="Verdict")
    answer = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    assert answer.json["decision"] == "block"
    assert "AUTOPILOT_CODEX_BUDGET_USD=Infinity is not accepted" in answer.json["systemMessage"]
    state = state_json(repo)
    assert state["budget_usd"] == 5.0


def test_one_bad_setting_does_not_reset_the_others(isolated: Path) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "config.json").write_text(
        json.dumps({"no_progress_limit": 5, "stall_limit": 99, "model": "m-1", "colour": 2})
    )
    warnings: list[str] = []
    config = load_config(environ={"AUTOPILOT_CODEX_TIMEOUT_S": "nan"}, warnings=warnings)
    assert (config.no_progress_limit, config.model) == (5, "m-1")
    assert (config.stall_limit, config.timeout_s) == (3, 180.0)
    assert len(warnings) == 3, warnings
    assert any("stall_limit=99" in w and "using stall_limit=3" in w for w in warnings)
    assert any("AUTOPILOT_CODEX_TIMEOUT_S=nan" in w for w in warnings)
    assert any("unknown setting colour" in w for w in warnings)


def test_a_bad_value_falls_back_to_the_next_source_not_the_default(isolated: Path) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "config.json").write_text(json.dumps({"stall_limit": 5}))
    warnings: list[str] = []
    config = load_config(environ={"AUTOPILOT_CODEX_STALL_LIMIT": "8"}, warnings=warnings)
    assert config.stall_limit == 5
    assert warnings and "using stall_limit=5" in warnings[0]


def test_the_loop_keeps_what_it_was_planned_with(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_API", "chat")
    monkeypatch.setenv("AUTOPILOT_CODEX_TIMEOUT_S", "30")
    monkeypatch.setenv("AUTOPILOT_CODEX_MAX_OUTPUT_TOKENS", "1000")
    start(repo, manager, capsys)
    stored = state_json(repo)
    assert (
        stored["autopilot"]["api"],
        stored["autopilot"]["timeout_s"],
        stored["autopilot"]["max_output_tokens"],
    ) == ("chat", 30, 1000)
    assert stored["autopilot"]["base_url"] == manager.base_url
    assert PLANTED_KEY not in json.dumps(stored)
    state = Store(repo).load()
    assert state is not None
    # The hook's environment (Claude Code's) has none of the shell's settings...
    hook_env = {"OPENAI_API_KEY": PLANTED_KEY}
    config = for_loop(state, hook_env)
    assert (config.api, config.timeout_s, config.max_output_tokens) == ("chat", 30.0, 1000)
    assert config.base_url == manager.base_url
    # ...and what it sets explicitly wins.
    config = for_loop(state, {**hook_env, "AUTOPILOT_CODEX_TIMEOUT_S": "60"})
    assert (config.api, config.timeout_s) == ("chat", 60.0)


def test_the_plan_output_cap_is_its_own_setting(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_PLAN_OUTPUT_TOKENS", "3000")
    monkeypatch.setenv("AUTOPILOT_CODEX_MAX_OUTPUT_TOKENS", "5000")
    start(repo, manager, capsys)
    body = manager.requests[0].body
    assert body is not None and body["max_output_tokens"] == 3000
    monkeypatch.setenv("AUTOPILOT_CODEX_PLAN_OUTPUT_TOKENS", "100")
    with pytest.raises(BridgeError, match="plan_output_tokens must be a number from 256"):
        load_config()


def test_the_readme_says_what_each_number_accepts() -> None:
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    for name, (low, high, open_low) in RANGES.items():
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
        accepted = f"above {low:.0f}, up to {high:.0f}" if open_low else f"{low:.0f}–{high:.0f}"
        assert accepted in row, (name, row)
