"""The wall takes Codex's terminal away (`write_stdin` types into it, seen by no hook), and no
flag a caller adds to a round gives it back."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex import hosts
from autopilot_codex.hosts.codex.boundary import BOUNDARY, boundary_config, effective_status


def test_a_flag_that_gives_a_round_its_terminal_back_is_loosening() -> None:
    for args in (
        ["-c", "features.unified_exec_tty=true"],
        ["--config=features.unified_exec_tty=true"],
        ["--enable", "unified_exec_tty"],
        ["--enable=unified_exec_tty"],
    ):
        assert BOUNDARY.loosening(args), args
    assert BOUNDARY.loosening(["--enable", "multi_agent_v2", "-c", "model=x"]) == []


def test_a_session_whose_config_keeps_the_terminal_is_not_walled_whole() -> None:
    """An in-session Codex: its wall is the config the user installed. Without the terminal
    taken away, `write_stdin` types into whatever runs, unseen: the wall is only partly up, and says so."""
    spec = hosts.roster().wall_spec(Path("/w/repo"), Path("/h/.autopilot-codex"), Path("/h"), {})
    config = boundary_config(spec, lambda _: True)
    assert effective_status(spec, {"user": config}, lambda _: True).level == "on"
    del config["features"]
    status = effective_status(spec, {"user": config}, lambda _: True)
    assert status.level == "partly"
    assert any("unified_exec_tty" in m for m in status.missing), status.missing
