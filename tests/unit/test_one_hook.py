"""What one hook works out once (`paths.OneHook`): a worktree's key and the settings. Within
the hook they are not worked out again; the next hook sees a link changed or the settings
edited in between (the direct path and the tests answer hooks one after another in one
process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex import paths
from autopilot_codex.admitted import Admitted
from autopilot_codex.config import load_config, load_with_warnings
from autopilot_codex.errors import BridgeError
from autopilot_codex.hookrun import run_hook
from autopilot_codex.paths import OneHook, project_key


def test_a_worktree_key_is_worked_out_once_in_a_hook_and_afresh_in_the_next(
    tmp_path: Path,
) -> None:
    first, second, link = tmp_path / "first", tmp_path / "second", tmp_path / "link"
    first.mkdir()
    second.mkdir()
    link.symlink_to(first)
    with OneHook():
        assert project_key(link) == project_key(first)
        link.unlink()
        link.symlink_to(second)
        # The hook's worktree is the one it started with, whatever a link says meanwhile.
        assert project_key(link) == project_key(first)
        assert project_key(str(link)) == project_key(first)
    assert project_key(link) == project_key(second)
    with OneHook():
        assert project_key(link) == project_key(second)


def test_outside_a_hook_every_question_is_answered_afresh(tmp_path: Path) -> None:
    first, second, link = tmp_path / "first", tmp_path / "second", tmp_path / "link"
    first.mkdir()
    second.mkdir()
    link.symlink_to(first)
    assert project_key(link) == project_key(first)
    link.unlink()
    link.symlink_to(second)
    assert project_key(link) == project_key(second)
    assert paths.this_hook() is None


def _settings(budget: object) -> None:
    (paths.state_home() / "config.json").write_text(json.dumps({"budget_usd": budget}))


def test_settings_are_read_once_in_a_hook_and_afresh_in_the_next() -> None:
    paths.state_home().mkdir(parents=True, exist_ok=True)
    _settings(5)
    with OneHook():
        assert load_with_warnings()[0].budget_usd == 5
        _settings(7)
        assert load_config().budget_usd == 5
        assert load_with_warnings()[0].budget_usd == 5
        # Asked with other sources, the settings are read as asked.
        assert load_config({"budget_usd": 9}).budget_usd == 9
    assert load_with_warnings()[0].budget_usd == 7
    with OneHook():
        assert load_config().budget_usd == 7


def test_a_setting_a_hook_ignored_is_still_refused_by_a_strict_reading_in_it() -> None:
    paths.state_home().mkdir(parents=True, exist_ok=True)
    _settings(-1)
    with OneHook():
        config, said = load_with_warnings()
        assert "budget_usd" in said
        assert load_with_warnings() == (config, said)
        with pytest.raises(BridgeError, match="budget_usd"):
            load_config()


def test_a_hook_leaves_no_memory_behind(tmp_path: Path) -> None:
    raw = json.dumps({"session_id": "s", "cwd": str(tmp_path)}).encode()
    assert run_hook(["Notification", "--host", "claude"], Admitted(raw, str(tmp_path))) == 0
    assert paths.this_hook() is None
