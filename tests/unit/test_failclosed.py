"""failclosed's edges: the crash line, the count that cannot be kept, a pause that cannot be
made, and the gate's exit codes when the engine could not answer at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex import failclosed
from autopilot_codex.admitted import Admitted
from autopilot_codex.gate import engine_failed
from autopilot_codex.paths import project_dir


def walled_state(worktree: Path, **fields: object) -> Path:
    folder = project_dir(worktree)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "state.json"
    path.write_text(json.dumps({"wall": "on", "status": "running", **fields}))
    return path


def test_the_crash_line_is_one_line_and_short() -> None:
    long = ValueError("x\n" * 300)
    line = failclosed.describe("Stop", long)
    assert "\n" not in line
    assert line.endswith("…)")
    assert failclosed.describe("", KeyError()) == (
        "autopilot-codex: internal error in the hook hook (KeyError)"
    )


def test_the_crash_line_never_carries_the_managers_key(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-live-" + "k" * 24
    monkeypatch.setenv("OPENAI_API_KEY", key)
    line = failclosed.describe("Stop", ValueError(f"bad header {key}"))
    assert line == (
        "autopilot-codex: internal error in the Stop hook (ValueError: bad header [REDACTED])"
    )
    assert failclosed.describe("Stop", Unnamed()).endswith("(Unnamed)")


def test_a_count_that_cannot_be_kept_lets_the_stop_through(tmp_path: Path) -> None:
    # The count has nowhere to go (its name is a folder): an uncounted block could be endless.
    walled_state(tmp_path)
    (project_dir(tmp_path) / failclosed.COUNT_FILE).mkdir()
    kind, line = failclosed.verdict("Stop", str(tmp_path), "crash")
    assert (kind, line) == (
        "pass",
        "crash. The Stop is let through: its crash count cannot be kept.",
    )


def test_a_stop_of_a_loop_whose_state_is_gone_is_let_through(tmp_path: Path) -> None:
    """Nothing left to drive (the state was moved aside as corrupt, say): no block; a tool
    call is still denied, as the rails stay on."""
    assert failclosed.verdict("Stop", str(tmp_path), "crash") == (
        "pass",
        "crash. The loop is not running: the Stop is let through.",
    )
    assert failclosed.verdict("PreToolUse", str(tmp_path), "crash")[0] == "deny"


def test_a_pause_of_a_loop_whose_state_is_gone_or_broken_says_so(tmp_path: Path) -> None:
    assert failclosed._pause(str(tmp_path), "why") == "The loop was not running."  # noqa: SLF001
    walled_state(tmp_path)
    assert failclosed._pause(str(tmp_path), "why").startswith(  # noqa: SLF001
        "The loop could not be paused ("
    )


@pytest.mark.parametrize(
    ("event", "code", "said"),
    [
        ("PreToolUse", 2, "This call is denied"),
        ("Stop", 2, "This Stop is blocked (1 of 3)"),
        ("PostToolUse", 0, "this hook was skipped"),
    ],
)
def test_the_gate_fallback_denies_and_blocks_by_exit_code_in_a_walled_loop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], event: str, code: int, said: str
) -> None:
    walled_state(tmp_path)
    assert failclosed.exit_for(event, str(tmp_path), ImportError("no hookrun")) == code
    err = capsys.readouterr().err
    assert err.startswith(
        f"autopilot-codex: internal error in the {event} hook (ImportError: no hookrun)"
    )
    assert said in err
    assert err.count("\n") == 1


def test_the_gate_fallback_lets_a_stop_through_once_the_limit_is_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    walled_state(tmp_path)
    codes = [failclosed.exit_for("Stop", str(tmp_path), OSError("x")) for _ in range(4)]
    assert codes == [2, 2, 2, 0]
    assert "The loop could not be paused" in capsys.readouterr().err.splitlines()[-1]


def test_the_gate_fallback_skips_in_an_unguarded_loop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    walled_state(tmp_path, wall="off")
    assert failclosed.exit_for("PreToolUse", str(tmp_path), ImportError("x")) == 0
    assert capsys.readouterr().err.endswith("(ImportError: x); this hook was skipped\n")


class Unnamed(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no name")


@pytest.mark.parametrize(
    ("event", "code", "tail"),
    [("PreToolUse", 2, "this call is denied"), ("Stop", 0, "this hook was skipped")],
)
def test_a_broken_fallback_still_denies_a_tool_and_never_wedges_a_stop(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    event: str,
    code: int,
    tail: str,
) -> None:
    def broken(*_: object) -> int:
        raise SyntaxError("failclosed.py")

    monkeypatch.setattr(failclosed, "exit_for", broken)
    admitted = Admitted(b"{}", str(tmp_path))
    assert engine_failed([event], admitted, KeyError("k")) == code
    assert capsys.readouterr().err == (
        f"autopilot-codex: internal error in the {event} hook (KeyError); {tail}\n"
    )


def test_a_count_file_that_does_not_read_as_a_number_starts_the_count_again(
    tmp_path: Path,
) -> None:
    walled_state(tmp_path)
    (project_dir(tmp_path) / failclosed.COUNT_FILE).write_text("garbage")
    assert "(1 of 3)" in failclosed.verdict("Stop", str(tmp_path), "crash")[1]


def test_a_helper_child_whose_engine_raises_fails_closed_as_the_direct_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex import helper_child, hookrun

    def broken(*_: object) -> int:
        raise RuntimeError("in the child")

    walled_state(tmp_path)
    monkeypatch.setattr(hookrun, "run_hook", broken)
    monkeypatch.setattr("sys.argv", ["helper", "hook", "PreToolUse", "--host", "claude"])
    fields = [b""] * 10
    fields[4], fields[5], fields[7] = str(tmp_path).encode(), b"autopilot", b"{}"
    assert helper_child.run(fields) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "autopilot-codex: internal error in the PreToolUse hook (RuntimeError: in the child)"
    )
