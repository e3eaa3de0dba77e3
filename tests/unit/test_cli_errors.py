"""The CLI's one error handler: exit codes by contract, one line, never a raw traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex import cli
from autopilot_codex.errors import BridgeError
from tests.conftest import run_hook_inproc


def fail_with(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    def run(*_: object) -> tuple[int, str]:
        raise error

    monkeypatch.setattr(cli, "_run", run)


def test_a_bridge_error_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fail_with(monkeypatch, BridgeError("the budget must be positive"))
    assert cli.main(["status"]) == 1
    assert capsys.readouterr().out == "autopilot-codex: the budget must be positive\n"


def test_ctrl_c_is_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fail_with(monkeypatch, KeyboardInterrupt())
    assert cli.main(["status"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_a_bug_is_one_line_exit_3_and_the_traceback_goes_to_the_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    fail_with(monkeypatch, ZeroDivisionError("division by zero"))
    assert cli.main(["status"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error (ZeroDivisionError: division by zero)" in err
    log = (isolated / "logs" / "bridge.log").read_text()
    assert "Traceback" in log and "ZeroDivisionError" in log


def test_a_bug_is_still_one_line_when_the_log_cannot_be_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    isolated.mkdir(parents=True)
    (isolated / "logs").write_text("a file where the log folder belongs\n")
    fail_with(monkeypatch, ZeroDivisionError("division by zero"))
    assert cli.main(["status"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (ZeroDivisionError" in err
    assert (isolated / "logs").read_text() == "a file where the log folder belongs\n"


def test_an_unknown_host_is_a_clear_non_blocking_answer(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from autopilot_codex.admitted import Admitted
    from autopilot_codex.hookrun import run_hook

    code = run_hook(["Stop", "--host", "cursor"], Admitted(b"{}", str(repo)))
    out = capsys.readouterr()
    assert (code, out.out) == (0, "")
    assert "unknown host 'cursor'; known: claude, codex" in out.err
    # The in-process hook path agrees for a known host with no loop: silent allow.
    run = run_hook_inproc("Stop", {"cwd": str(repo), "session_id": "s"}, capsys, monkeypatch)
    assert (run.code, run.stdout) == (0, "")


def test_an_option_a_command_does_not_take_is_refused_with_the_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`status` has no words to take an unknown option into (as a goal does): refused, exit 2."""
    with pytest.raises(SystemExit) as exited:
        cli.main(["status", "--verbose"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: autopilot-codex") and err.endswith(
        "autopilot-codex: error: unrecognized arguments: --verbose\n"
    )
