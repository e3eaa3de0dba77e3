"""The gate's input and exit: a hook reads its payload to the end, gives up on one that never
ends, survives a stdin it cannot read, always exits 0, and starts the engine only for a loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autopilot_codex import gate
from tests.conftest import ROOT, make_repo, payload, run_launcher

# Longer than any test here can take: reading a closed pipe must never wait for it.
NEVER = 3600.0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def test_a_piped_payload_larger_than_one_read_is_read_to_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = json.dumps({"cwd": "/", "tool_input": {"content": "x" * (3 << 20)}}).encode()
    read_end, write_end = os.pipe()
    stdin = os.fdopen(read_end, "r")
    monkeypatch.setattr(sys, "stdin", stdin)

    def write() -> None:
        _write_all(write_end, data)
        os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert gate.read_stdin(NEVER) == data
    finally:
        writer.join()
        stdin.close()


def test_a_small_payload_ends_when_the_host_closes_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"cwd": "/"}')
    os.close(write_end)
    with os.fdopen(read_end, "r") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        assert gate.read_stdin(NEVER) == b'{"cwd": "/"}'


def test_input_that_never_ends_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"cwd": "/", "session')  # and never closed: a wrapper that forgot
    stdin = os.fdopen(read_end, "r")
    monkeypatch.setattr(sys, "stdin", stdin)
    try:
        with pytest.raises(gate.InputTimeout, match=r"did not end within 0\.2 s"):
            gate.read_stdin(0.2)
    finally:
        os.close(write_end)
        stdin.close()


def test_a_stdin_that_cannot_be_read_is_an_empty_payload(tmp_path: Path) -> None:
    # A host that hands the hook a write-only file: reading it fails, the hook has no input.
    target = os.open(tmp_path / "out.txt", os.O_WRONLY | os.O_CREAT)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from autopilot_codex.gate import read_stdin\n"
        "print(read_stdin(float(sys.argv[2])))\n"
    )
    try:
        out = subprocess.run(
            [sys.executable, "-S", "-c", code, str(ROOT / "bridge"), str(NEVER)],
            stdin=target,
            capture_output=True,
            text=True,
            check=True,
            timeout=NEVER,
        ).stdout
    finally:
        os.close(target)
    assert out == "b''\n"


def test_a_hook_without_stdin_is_skipped_and_exits_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A hook started with its stdin closed: Python gives it no sys.stdin at all.
    monkeypatch.setattr(sys, "stdin", None)
    assert gate.hook_main(["Stop", "--host", "claude"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "autopilot-codex: hook skipped (AttributeError" in captured.err


def test_a_hook_with_no_loop_exits_0_without_starting_the_engine(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from autopilot_codex.gate import hook_main\n"
        "code = hook_main(['Stop', '--host', 'claude'])\n"
        "print(code, 'autopilot_codex.hookrun' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, str(ROOT / "bridge")],
        input=json.dumps(payload("Stop", repo)).encode(),
        capture_output=True,
        check=True,
    )
    assert done.stdout.decode() == "0 False\n", done.stderr.decode()


def test_another_sessions_tool_call_still_meets_the_rails(repo: Path) -> None:
    # The event name decides: PreToolUse is admitted for every session in the worktree.
    started = run_launcher(
        ["ralph", "--completion-promise", "DONE", "--session-id", "s1", "Make", "it"], cwd=repo
    )
    assert started.code == 0, started.stdout + started.stderr
    call = payload(
        "PreToolUse",
        repo,
        session="s2",
        tool_name="Bash",
        tool_input={"command": "git push --force origin main"},
    )
    ran = run_launcher(
        ["hook", "PreToolUse", "--host", "claude"], stdin=json.dumps(call).encode(), cwd=repo
    )
    assert ran.code == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_payload_over_the_cap_is_cut_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b" " * (gate.MAX_STDIN_BYTES + 4096)
    read_end, write_end = os.pipe()
    stdin = os.fdopen(read_end, "r")
    monkeypatch.setattr(sys, "stdin", stdin)

    def write() -> None:
        try:
            _write_all(write_end, data)
        except BrokenPipeError:
            pass  # the reader stopped at the cap and closed its end
        finally:
            os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert len(gate.read_stdin(NEVER)) == gate.MAX_STDIN_BYTES
    finally:
        stdin.close()
        writer.join()


def test_the_readme_names_the_input_timeout_the_hook_gives() -> None:
    # The troubleshooting table quotes the message a user sees.
    readme = (ROOT / "README.md").read_text()
    assert f"its input did not end within {gate.STDIN_TIMEOUT_S:g} s" in readme
