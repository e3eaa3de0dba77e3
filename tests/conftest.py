"""Shared fixtures: an isolated state home, real git repositories, the fake OpenAI server."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import settings

import autopilot_codex.styles  # noqa: F401 - registers each style's record, as the CLI and hooks do
from tests.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "bin" / "autopilot-codex"
PLANTED_KEY = "sk-test-PLANTEDKEY-0123456789abcdefXYZ"

# Property tests draw the same examples on every run unless HYPOTHESIS_PROFILE=explore: a
# suite that lands or not by the luck of a draw tells nobody anything. Exploring runs find new
# cases; a case found is then kept as an explicit example or a unit test.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# A suite started in the background by a non-interactive shell (`cmd &`) inherits SIGINT
# ignored, and so would every driver a test starts and then interrupts with a Ctrl-C: those
# tests would hang on a driver that cannot hear it. Python's own handler here means a child's
# SIGINT is back to its default at exec, as it is when the suite runs in a terminal or in CI.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def without_sandbox_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH holding only git, bash and env: no bubblewrap, no socat, so no host's sandbox
    can start (the wall is off)."""
    bare = tmp_path / "bare-path"
    bare.mkdir()
    for tool in ("git", "bash", "env"):
        found = next(
            Path(d) / tool
            for d in os.environ["PATH"].split(os.pathsep)
            if (Path(d) / tool).exists()
        )
        (bare / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bare))


def _loopback_only(event: str, args: tuple[object, ...]) -> None:
    """Audit hook: a test may connect to 127.0.0.1 (the fakes) and to nothing else."""
    if event != "socket.connect" or len(args) < 2:
        return
    address = args[1]
    if isinstance(address, tuple) and address and isinstance(address[0], str):
        host = address[0]
        if not (host.startswith("127.") or host in ("::1", "localhost")):
            raise ConnectionRefusedError(f"tests make no connection beyond loopback (tried {host})")


sys.addaudithook(_loopback_only)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No test reads or writes the real state home, config or API key."""
    for var in list(os.environ):
        if var.startswith(("AUTOPILOT_CODEX_", "OPENAI_", "CLAUDE")):
            monkeypatch.delenv(var, raising=False)
    home = tmp_path / "state-home"
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(home))
    if os.environ.get("AUTOPILOT_TEST_HELPER") != "1":
        # The resident helper has its own tests (test_helper); one per test's state home would
        # outlive the test. AUTOPILOT_TEST_HELPER=1 runs every hook test through it instead.
        monkeypatch.setenv("AUTOPILOT_CODEX_HELPER", "0")
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    yield home
    # The shadow history's workers (shadow/background.py) end before the test's folder goes.
    for lock in home.glob("projects/*/shadow.lock"):
        from autopilot_codex.fileio import acquire

        fd = os.open(lock, os.O_RDWR)
        try:
            acquire(fd, 120)
        finally:
            os.close(fd)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "# demo\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


def task(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"T{n}",
        "title": f"task number {n}",
        "files": [f"file{n}.txt"],
        "steps": [f"write file{n}.txt"],
        "acceptance": [f"file{n}.txt exists"],
        "tests": [],
        **extra,
    }


def plan_body(tasks: int = 2) -> dict[str, Any]:
    return {"summary": "a small plan", "tasks": [task(n) for n in range(1, tasks + 1)]}


def review_body(decision: str = "approve", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "decision": decision,
        "summary": f"review says {decision}",
        "findings": [],
        "revert_files": [],
    }
    if decision != "approve":
        body["findings"] = [
            {
                "severity": "high",
                "file": "file1.txt",
                "line_start": 1,
                "line_end": 2,
                "title": "wrong content",
                "recommendation": "write the right content",
            }
        ]
    if decision == "reject":
        body["revert_files"] = ["file1.txt"]
    body.update(extra)
    return body


def verdict_body(decision: str = "continue", done: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "decision": decision,
        "reason": f"verdict says {decision}",
        "current_task_done": done,
        "instructions": "",
        "findings": [],
        **extra,
    }


@dataclass
class HookRun:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout) if self.stdout.strip() else {}


def payload(event: str, cwd: Path, session: str = "sess-1", **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "session_id": session,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": str(cwd),
        "hook_event_name": event,
    }
    if event == "Stop":
        base.update(stop_hook_active=False, last_assistant_message="I did the task.")
    base.update(extra)
    return base


def edit_payload(cwd: Path, name: str = "file1.txt", session: str = "sess-1") -> dict[str, Any]:
    path = str(cwd / name)
    return payload(
        "PostToolUse",
        cwd,
        session,
        tool_name="Write",
        tool_input={"file_path": path, "content": "x"},
        tool_response={"type": "create", "filePath": path},
        tool_use_id="toolu_1",
    )


def run_hook_inproc(
    event: str,
    data: dict[str, Any] | bytes | str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> HookRun:
    """The hook path of `python -m autopilot_codex hook <event>`, run in this process."""
    from autopilot_codex.__main__ import run

    raw = (
        data
        if isinstance(data, bytes)
        else (data if isinstance(data, str) else json.dumps(data)).encode()
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    monkeypatch.setattr(sys, "argv", ["autopilot-codex", "hook", event, "--host", "claude"])
    capsys.readouterr()
    code = run()
    out = capsys.readouterr()
    return HookRun(code, out.out, out.err)


def run_launcher(
    args: list[str], stdin: bytes = b"", cwd: Path | None = None, env: dict[str, str] | None = None
) -> HookRun:
    """The real launcher in a subprocess, with this interpreter as the bridge's Python."""
    full_env = {**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable, **(env or {})}
    proc = subprocess.run(
        [str(LAUNCHER), *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=full_env,
        timeout=120,
    )
    return HookRun(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def edit_state(worktree: Path, **changes: Any) -> None:
    """Set up a scenario by changing the loop's state the way the bridge does (lock, save), so
    the tamper check sees the bridge's own write, not a foreign edit."""
    from autopilot_codex.store import Store

    store = Store(worktree)
    with store.locked():
        state = store.load(with_plan=False)
        assert state is not None
        if state.own is not None:  # a field of the style's own record is changed there
            names = {f.name for f in dataclasses.fields(state.own)}  # type: ignore[arg-type]
            mine = {k: changes.pop(k) for k in names & changes.keys()}
            changes.setdefault("own", state.own.evolve(**mine))
        store.save(state.evolve(**changes))


# The in-process hook runner the `hook` fixture gives (a test file may define its own `hook`).
Hook = Callable[[str, "dict[str, Any] | bytes | str"], HookRun]


@pytest.fixture
def hook(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Hook:
    def run(event: str, data: dict[str, Any] | bytes | str) -> HookRun:
        return run_hook_inproc(event, data, capsys, monkeypatch)

    return run


def state_of(repo: Path) -> dict[str, Any]:
    """The loop's state.json as written, for assertions (no loading, no checks)."""
    from autopilot_codex.paths import project_dir

    return cast("dict[str, Any]", json.loads((project_dir(repo) / "state.json").read_text()))


# The fake host (`tests/fakes/fake_host.py`) as both hosts' headless CLI for the rounds tests;
# `script(steps)` writes the steps it plays.
FAKE_HOST = ROOT / "tests" / "fakes" / "fake_host.py"
Script = Callable[[list[dict[str, Any]]], Path]


@pytest.fixture
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Script:
    import shlex

    path = tmp_path / "script.json"

    def setup(steps: list[dict[str, Any]]) -> Path:
        path.write_text(json.dumps(steps))
        return path

    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_HOST))}"
    monkeypatch.setenv("AUTOPILOT_CODEX_CLAUDE_CMD", command)
    monkeypatch.setenv("AUTOPILOT_CODEX_CODEX_CMD", command)
    monkeypatch.setenv("FAKE_HOST_SCRIPT", str(path))
    return setup


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`autopilot-codex ARGV` in-process: its exit code and everything it printed."""
    from autopilot_codex.cli import main

    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def unwalled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor's own git and checks run without its sandbox: for a test that watches a
    check or a git program from outside the work tree (a file in tmp_path, a pid), which the
    sandbox keeps read-only or numbers apart. tests/unit/test_sandbox_*.py run them walled."""
    from autopilot_codex.sandbox import jail

    monkeypatch.setattr(jail, "_known", jail.Wall("linux", False, why="a test"))


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A real, throwaway Postgres cluster for the session (`tests/postgres.py`); skipped, saying
    why, only where the binaries are missing."""
    from tests import postgres as pg

    why = pg.missing()
    if why:
        pytest.skip(why)
    with pg.cluster() as made:
        yield made


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The DBOS system database a durable test runs on, exported as every command reads it: a
    SQLite file in the test's folder, or a fresh database in the session's real Postgres
    cluster (skipped, saying why, where its binaries are missing). DBOS launched in this
    process is shut down after the test."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'dbos' / 'system.sqlite'}"
    else:
        url = str(request.getfixturevalue("postgres").new_database())
    monkeypatch.setenv("AUTOPILOT_CODEX_DATABASE_URL", url)
    yield url
    from autopilot_codex.durable import app

    app.shutdown()
