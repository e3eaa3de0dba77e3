"""Settings from their three sources at the edges: a config file that is not an object, a
flag over the environment over the file, JSON types that are not the setting's, and the
accepted values as the messages say them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.config import Config, accepted, load_config
from autopilot_codex.errors import BridgeError


def home_with(tmp_path: Path, data: object) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(data))
    return tmp_path


def test_a_config_file_that_is_not_an_object_is_refused_or_skipped(tmp_path: Path) -> None:
    home = home_with(tmp_path, ["budget_usd", 5])
    with pytest.raises(BridgeError, match="must hold a JSON object"):
        load_config(environ={}, home=home)
    warnings: list[str] = []
    config = load_config(environ={}, home=home, warnings=warnings)
    assert config == load_config(environ={}, home=tmp_path / "none")
    assert warnings == [f"{home / 'config.json'} must hold a JSON object; its settings are ignored"]


def test_a_flag_wins_over_the_environment_which_wins_over_the_file(tmp_path: Path) -> None:
    home = home_with(tmp_path, {"budget_usd": 3, "max_iterations": 7})
    environ = {"AUTOPILOT_CODEX_BUDGET_USD": "4", "AUTOPILOT_CODEX_MAX_ITERATIONS": "8"}
    config = load_config({"budget_usd": 5.0}, environ=environ, home=home)
    assert (config.budget_usd, config.max_iterations) == (5.0, 8)


def test_json_values_of_the_wrong_kind_are_refused_and_lists_are_taken_as_lists(
    tmp_path: Path,
) -> None:
    home = home_with(tmp_path, {"max_iterations": True})
    with pytest.raises(BridgeError, match="max_iterations must be a number from"):
        load_config(environ={}, home=home)
    warnings: list[str] = []
    assert load_config(environ={}, home=home, warnings=warnings).max_iterations > 0
    assert "ignored; using max_iterations=" in warnings[0]
    home = home_with(tmp_path, {"rails_allow": ["git push", 3], "allow_push": "yes"})
    config = load_config(environ={}, home=home)
    assert config.rails_allow == ("git push", "3") and config.allow_push is True


def test_the_accepted_values_are_said_as_the_readme_says_them() -> None:
    assert accepted("checks") == "a list of commands or of {command, timeout_s} objects"
    assert accepted("model") == "any text"
    assert accepted("api").startswith("one of ")


def test_a_second_reading_sees_what_changed_and_says_the_same_warnings(tmp_path: Path) -> None:
    """A hook reads its settings more than once (a Stop that ends a loop: its start and the
    notice); the second reading is the first's only while the file and environment are."""
    home = home_with(tmp_path, {"timeout_s": 30})
    assert load_config(environ={}, home=home).timeout_s == 30
    home_with(tmp_path, {"timeout_s": 40})  # same size, at once: no clock tells them apart
    assert load_config(environ={}, home=home).timeout_s == 40
    assert load_config(environ={"AUTOPILOT_CODEX_TIMEOUT_S": "50"}, home=home).timeout_s == 50
    home_with(tmp_path, {"timeout_s": "soon"})
    for _ in range(2):
        warnings: list[str] = []
        assert load_config(environ={}, home=home, warnings=warnings).timeout_s == Config().timeout_s
        assert len(warnings) == 1 and "timeout_s" in warnings[0]
    with pytest.raises(BridgeError, match="timeout_s"):
        load_config(environ={}, home=home)
