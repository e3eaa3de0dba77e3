"""A trial's state home carries the user's settings and stored login, and adds the hidden
tests' places to the wall's list."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from autopilot_codex import credentials
from autopilot_codex.credentials import Credentials
from bench.ab import homes
from bench.ab.workdir import TrialSetupError


def test_the_users_settings_and_login_are_carried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user-home"
    user.mkdir()
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(user))
    (user / "config.json").write_text(json.dumps({"model": "gpt-x", "wall_deny_read": ["~/notes"]}))
    credentials.save(Credentials(api_key="sk-stored", base_url="", organization=""))
    trial = tmp_path / "trial" / "state"
    homes.make(trial, [tmp_path / "verifier", tmp_path / "task"])
    config = json.loads((trial / "config.json").read_text())
    assert config == {
        "model": "gpt-x",
        "wall_deny_read": ["~/notes", str(tmp_path / "verifier"), str(tmp_path / "task")],
    }
    stored = credentials.load(trial)
    assert stored is not None and stored.api_key == "sk-stored"
    assert stat.S_IMODE(credentials.path(trial).stat().st_mode) == 0o600
    with homes.named(trial):
        assert os.environ["AUTOPILOT_CODEX_HOME"] == str(trial)
    assert os.environ["AUTOPILOT_CODEX_HOME"] == str(user)


def test_without_user_settings_only_the_wall_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(tmp_path / "nothing-here"))
    trial = tmp_path / "state"
    homes.make(trial, [tmp_path / "v"])
    assert json.loads((trial / "config.json").read_text()) == {"wall_deny_read": [str(tmp_path / "v")]}
    assert credentials.load(trial) is None
    monkeypatch.delenv("AUTOPILOT_CODEX_HOME")
    with homes.named(trial):
        assert os.environ["AUTOPILOT_CODEX_HOME"] == str(trial)
    assert "AUTOPILOT_CODEX_HOME" not in os.environ


def test_a_login_that_cannot_be_kept_refuses_the_trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user-home"
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(user))
    credentials.save(Credentials(api_key="sk-stored", base_url="", organization=""))
    # A trial home inside a repository: the product refuses to keep a key there.
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    with pytest.raises(TrialSetupError, match="cannot be kept"):
        homes.make(repo / "state", [])
