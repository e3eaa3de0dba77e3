from pathlib import Path

import pytest
from settings import load, read_env, read_file


def test_file_layer_strips_and_lowercases(tmp_path: Path) -> None:
    conf = tmp_path / "app.conf"
    conf.write_text("  # indented comment\n  Log_Level  =  info  \nurl = a=b\n")
    assert read_file(conf) == {"log_level": "info", "url": "a=b"}


def test_file_layer_names_the_bad_line(tmp_path: Path) -> None:
    conf = tmp_path / "app.conf"
    conf.write_text("a = 1\n\nbroken\n")
    with pytest.raises(ValueError, match="line 3"):
        read_file(conf)


def test_env_layer_keeps_only_app_variables() -> None:
    env = {"APP_LOG_LEVEL": "debug", "HOME": "/home/ann", "APPLE": "x"}
    assert read_env(env) == {"log_level": "debug"}


def test_later_layers_win(tmp_path: Path) -> None:
    conf = tmp_path / "app.conf"
    conf.write_text("port = 1\nname = file\nmode = file\n")
    env = {"APP_PORT": "2", "APP_MODE": "env"}
    assert load(conf, env, ["MODE=cli"]) == {"port": "2", "name": "file", "mode": "cli"}


def test_missing_file_is_an_empty_layer(tmp_path: Path) -> None:
    assert load(tmp_path / "none.conf", {"APP_X": "1"}, []) == {"x": "1"}


def test_bad_override_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        load(tmp_path / "none.conf", {}, ["novalue"])
