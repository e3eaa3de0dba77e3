"""The route: with the `codex` manager backend and no model chosen, Codex answers with the
model of the profile its config selects (`profile = "deep"`, `[profiles.deep] model = ...`),
while the budget guard priced the config's top-level `model`, a cheaper one: a call priced
at gpt-6-luna ran on gpt-6-astra, a hundred times dearer, so the guard let through calls the
budget could not cover. The manager's price now follows Codex's own order, as a round's
does (`hosts/codex/round_model.py`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.config import Config
from autopilot_codex.manager import select
from autopilot_codex.manager.pricing import price_for

PROFILED = 'model = "gpt-6-luna"\nprofile = "deep"\n\n[profiles.deep]\nmodel = "gpt-6-astra"\n'


@pytest.fixture
def codex_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A logged-in `codex` on PATH whose `exec` is recorded and fails, its config selecting
    a profile."""
    shim, log = tmp_path / "shim", tmp_path / "codex-calls.txt"
    shim.mkdir()
    (shim / "codex").write_text(
        f'#!/bin/sh\nif [ "$1" = exec ]; then echo "$@" >> "{log}"; exit 1; fi\nexit 0\n'
    )
    (shim / "codex").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(PROFILED)
    monkeypatch.setenv("CODEX_HOME", str(home))
    return log


def test_the_manager_is_priced_at_the_model_of_the_profile_codex_uses(codex_log: Path) -> None:
    default = Config.model  # not chosen by the user: Codex uses its own configured model
    config = Config(manager="codex", model=default)
    assert select.price_of(config, default) == price_for("gpt-6-astra")


def test_a_plan_the_profiles_model_cannot_afford_is_never_asked(
    repo: Path, codex_log: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_MANAGER", "codex")
    # Covers the plan's worst case at gpt-6-luna, not at gpt-6-astra.
    assert main(["-C", str(repo), "plan", "--budget", "0.50", "goal"]) == 1
    assert "cannot cover even the plan" in capsys.readouterr().out
    assert not codex_log.exists()
