"""The wall takes Codex's terminal away (`write_stdin` types into it, seen by no hook), and no
flag a caller adds to a round gives it back."""

from __future__ import annotations

from autopilot_codex.hosts.codex.boundary import BOUNDARY


def test_a_flag_that_gives_a_round_its_terminal_back_is_loosening() -> None:
    for args in (
        ["-c", "features.unified_exec_tty=true"],
        ["--config=features.unified_exec_tty=true"],
        ["--enable", "unified_exec_tty"],
        ["--enable=unified_exec_tty"],
    ):
        assert BOUNDARY.loosening(args), args
    assert BOUNDARY.loosening(["--enable", "multi_agent_v2", "-c", "model=x"]) == []
