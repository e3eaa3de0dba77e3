"""The budget guard's worst case holds for the `codex` manager backend: priced by the model
Codex will use, with the text Codex sends besides our prompt, and with the output Codex does
not cap. A `codex` stand-in that is logged in and records every `exec` shows that a call the
budget cannot cover is never made."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.config import Config
from autopilot_codex.manager import codex_backend, select
from autopilot_codex.manager.pricing import (
    BILLED_ATTEMPTS,
    MOST_EXPENSIVE,
    RETRY_NOTE_TOKENS,
    Usage,
    cost_usd,
    estimate_tokens,
    price_for,
)
from autopilot_codex.paths import project_dir
from tests.conftest import payload, plan_body, run_hook_inproc, verdict_body
from tests.fakes.openai_server import FakeOpenAI

MODEL = "gpt-5.4-mini"
# Covers the openai worst case of a plan (8k output) and of a verdict (4k output) at this
# model's price, but not the codex worst case (32k output) of either.
BUDGET = "0.20"


@pytest.fixture
def codex_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A logged-in `codex` on PATH whose `exec` is recorded and fails."""
    shim, log = tmp_path / "shim", tmp_path / "codex-calls.txt"
    shim.mkdir()
    (shim / "codex").write_text(
        f'#!/bin/sh\nif [ "$1" = exec ]; then echo "$@" >> "{log}"; exit 1; fi\nexit 0\n'
    )
    (shim / "codex").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return log


def codex_config(model: str) -> Config:
    return Config(manager="codex", model=model)


def test_the_codex_worst_case_adds_its_overhead_and_uncapped_output(codex_log: Path) -> None:
    prompt = "x" * 3_000
    got = select.worst_case_usd(codex_config(MODEL), MODEL, prompt, 4_000)
    tokens_in = estimate_tokens(prompt + " " * codex_backend.OVERHEAD_CHARS)

    def attempts(tokens: int, output: int) -> float:
        # The first attempt, then each corrective retry with its note (the true ceiling).
        first = cost_usd(Usage(tokens, 0, output), price_for(MODEL))
        retry = cost_usd(Usage(tokens + RETRY_NOTE_TOKENS, 0, output), price_for(MODEL))
        return first + (BILLED_ATTEMPTS - 1) * retry

    assert got == pytest.approx(attempts(tokens_in, codex_backend.OUTPUT_CAP_TOKENS))
    openai = select.worst_case_usd(Config(manager="openai", model=MODEL), MODEL, prompt, 4_000)
    assert openai == pytest.approx(attempts(estimate_tokens(prompt), 4_000))
    # More output asked for than the cap: the larger figure is budgeted.
    assert select.worst_case_usd(codex_config(MODEL), MODEL, prompt, 64_000) > got


def test_codex_prices_the_model_its_config_names_or_the_dearest_row(
    codex_log: Path, tmp_path: Path
) -> None:
    default = Config.model  # not chosen by the user: Codex uses its own configured model
    assert select.price_of(codex_config(default), default) == MOST_EXPENSIVE
    (tmp_path / "codex-home" / "config.toml").write_text(f'model = "{MODEL}"\n')
    assert select.price_of(codex_config(default), default) == price_for(MODEL)
    assert select.price_of(codex_config("gpt-5.5"), "gpt-5.5") == price_for("gpt-5.5")
    # The openai backend prices what it is asked to use.
    assert select.price_of(Config(manager="openai"), default) == price_for(default)


def test_a_plan_the_codex_worst_case_cannot_cover_is_never_asked(
    repo: Path, codex_log: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_MANAGER", "codex")
    argv = ["-C", str(repo), "plan", "--model", MODEL, "--budget", BUDGET, "goal"]
    assert main(argv) == 1
    assert "cannot cover even the plan" in capsys.readouterr().out
    assert not codex_log.exists()


@pytest.mark.parametrize(("backend", "stopped"), [("codex", True), ("openai", False)])
def test_a_verdict_the_codex_worst_case_cannot_cover_stops_the_loop_unasked(
    repo: Path,
    manager: FakeOpenAI,
    codex_log: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    backend: str,
    stopped: bool,
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    argv = ["-C", str(repo), "plan", "--model", MODEL, "--budget", BUDGET, "--review", "off"]
    assert main([*argv, "--session-id", "sess-1", "goal"]) == 0
    monkeypatch.setenv("AUTOPILOT_CODEX_MANAGER", backend)
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert (state["status"] == "stopped_budget") is stopped
    assert not codex_log.exists()  # codex never ran: refused (codex) or not the backend (openai)
    assert len(manager.requests_for(schema="Verdict")) == (0 if stopped else 1)


@pytest.mark.parametrize(("backend", "refused"), [("codex", True), ("openai", False)])
def test_a_question_the_codex_worst_case_cannot_cover_is_not_asked(
    repo: Path,
    manager: FakeOpenAI,
    codex_log: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    backend: str,
    refused: bool,
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    argv = ["-C", str(repo), "plan", "--model", MODEL, "--budget", BUDGET]
    assert main([*argv, "--session-id", "sess-1", "goal"]) == 0
    monkeypatch.setenv("AUTOPILOT_CODEX_MANAGER", backend)
    answer = {"answer": "use b.py", "confidence": "high", "plan_change": None}
    manager.enqueue(answer, schema="Consultation")
    capsys.readouterr()
    code = main(["-C", str(repo), "ask", "--session-id", "sess-1", "which parser?"])
    out = capsys.readouterr().out
    assert (code == 1 and "not asked: budget used up" in out) is refused, out
    assert not codex_log.exists()
