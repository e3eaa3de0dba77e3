"""`login` keeps the manager's key in a user-only file of the state home: real files and modes,
a manager call through the fake server with no key in the environment, and the key nowhere
else (output, `status --json`, `doctor`, the ledger, the logs)."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex import credentials
from autopilot_codex.cli import main
from autopilot_codex.commands.doctor import render, run_checks
from autopilot_codex.commands.login import login
from autopilot_codex.config import load_config
from autopilot_codex.credentials import redact
from autopilot_codex.errors import BridgeError
from autopilot_codex.hostwall import spec_for
from autopilot_codex.manager.openai_backend import api_key_problem
from autopilot_codex.manager.select import backend_name
from autopilot_codex.paths import project_dir, state_home
from tests.conftest import LAUNCHER, PLANTED_KEY, payload, plan_body, run_hook_inproc, verdict_body
from tests.fakes.openai_server import FakeOpenAI

STORED_KEY = "sk-stored-LOGINKEY-9876543210fedcbaQRS"


def cli(
    capsys: pytest.CaptureFixture[str], *argv: str, stdin: str | None = None
) -> tuple[int, str]:
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        code = main(list(argv))
    finally:
        sys.stdin = sys.__stdin__
    out = capsys.readouterr()
    return code, out.out + out.err


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def everything_under(home: Path) -> str:
    """Every file of the state home but the stored login itself, as text."""
    keep = credentials.path(home)
    texts = [
        p.read_text(encoding="utf-8", errors="replace")
        for p in home.rglob("*")
        if p.is_file() and p != keep
    ]
    return "\n".join(texts)


def test_login_from_stdin_writes_a_user_only_file_and_never_prints_the_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = cli(capsys, "login", "-", stdin=STORED_KEY + "\n")
    assert code == 0
    where = credentials.path()
    assert where == state_home() / "secret" / "credentials.json"
    assert str(where) in out and STORED_KEY not in out
    assert mode(where) == 0o600
    assert mode(where.parent) == 0o700
    assert json.loads(where.read_text())["api_key"] == STORED_KEY
    # No temporary file is left beside it.
    assert [p.name for p in where.parent.iterdir()] == ["credentials.json"]

    code, out = cli(capsys, "login", "--status")
    assert code == 0 and "a key is stored in" in out and "(mode 600)" in out
    assert STORED_KEY not in out

    code, out = cli(capsys, "logout")
    assert code == 0 and "removed the stored key" in out
    assert not where.exists()
    code, out = cli(capsys, "login", "--status")
    assert "no key stored" in out


def test_login_tightens_a_loose_folder_and_replaces_the_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = credentials.path().parent
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    credentials.path().write_text('{"api_key": "sk-old-000000000000"}')
    credentials.path().chmod(0o644)
    assert cli(capsys, "login", "-", stdin=STORED_KEY)[0] == 0
    assert mode(folder) == 0o700 and mode(credentials.path()) == 0o600
    stored = credentials.load()
    assert stored is not None and stored.api_key == STORED_KEY


def test_login_from_env_takes_the_key_and_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-demo")
    code, out = cli(capsys, "login", "--from-env")
    assert code == 0 and PLANTED_KEY not in out
    # Still exported: the user is told to remove the export.
    assert "remove the export of OPENAI_API_KEY" in out
    stored = credentials.load()
    assert stored == credentials.Credentials(PLANTED_KEY, "http://127.0.0.1:9/v1", "org-demo")


def test_login_reads_the_terminal_without_echo_and_refuses_an_empty_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    asked: list[str] = []

    def terminal(question: str) -> str:
        asked.append(question)
        return STORED_KEY

    login(from_env=False, from_stdin=False, base_url=None, organization=None, prompt=terminal)
    assert asked == ["OpenAI API key (not shown): "]
    assert credentials.api_key() == STORED_KEY
    code, out = cli(capsys, "login", "-", stdin="\n")
    assert code == 1 and "no key given" in out
    code, out = cli(capsys, "login", "-", stdin="sk two words\n")
    assert code == 1 and "spaces" in out
    assert credentials.api_key() == STORED_KEY


def test_from_env_without_a_key_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    code, out = cli(capsys, "login", "--from-env")
    assert code == 1 and "OPENAI_API_KEY is not set here" in out
    assert not credentials.path().exists()


def test_the_stored_key_is_what_the_backend_and_the_checks_see(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("PATH", "/nonexistent")  # no codex to fall back on
    config = load_config()
    assert api_key_problem() is not None
    credentials.save(credentials.Credentials(STORED_KEY))
    assert api_key_problem() is None
    assert backend_name(config) == "openai"
    assert "[REDACTED]" in redact(f"the key is {STORED_KEY}")
    assert STORED_KEY not in redact(f"the key is {STORED_KEY}")


def test_the_state_home_holding_the_login_is_hidden_by_the_wall(repo: Path) -> None:
    hidden = spec_for(repo).hidden_paths()
    assert state_home() in hidden
    assert state_home() in credentials.path().parents


def test_a_loop_runs_on_the_stored_key_alone_and_never_shows_it(
    repo: Path,
    manager: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    assert cli(capsys, "login", "-", stdin=STORED_KEY)[0] == 0
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
    assert code == 0, out
    assert "loop started" in out
    # No key in the environment: nothing to warn about.
    assert "is exported" not in out
    assert manager.requests[0].headers["authorization"] == f"Bearer {STORED_KEY}"
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    stop = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    assert stop.json.get("decision") == "block"
    assert all(r.headers["authorization"] == f"Bearer {STORED_KEY}" for r in manager.requests)
    assert STORED_KEY not in stop.stdout

    code, status_json = cli(capsys, "-C", str(repo), "status", "--json")
    assert code == 0 and STORED_KEY not in status_json
    doctor = render(run_checks(str(repo)))
    assert STORED_KEY not in doctor
    assert "stored by `autopilot-codex login`" in doctor
    assert (project_dir(repo) / "events.jsonl").exists()
    assert STORED_KEY not in everything_under(state_home())


def test_the_stored_key_wins_over_the_environment(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    credentials.save(credentials.Credentials(STORED_KEY))
    manager.enqueue(plan_body(1), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "goal")
    assert code == 0
    assert manager.requests[0].headers["authorization"] == f"Bearer {STORED_KEY}"
    # The environment's key is still exported where the implementer can read it: said.
    assert "OPENAI_API_KEY is exported" in out
    assert "autopilot-codex login --from-env" in out
    assert PLANTED_KEY not in out and STORED_KEY not in out


def test_doctor_says_the_exported_key_is_readable_and_how_to_move_it() -> None:
    text = render(run_checks("."))
    line = next(line for line in text.splitlines() if "OPENAI_API_KEY is exported" in line)
    assert line.startswith("--")
    assert "autopilot-codex login --from-env" in line and "envVars" in line
    assert PLANTED_KEY not in text


def test_a_state_home_inside_a_repository_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(repo / ".autopilot-codex"))
    code, out = cli(capsys, "login", "-", stdin=STORED_KEY)
    assert code == 1 and "could be committed" in out
    assert not (repo / ".autopilot-codex" / "secret").exists()


def test_login_status_and_logout_say_what_is_stored_and_how_safely(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    code, out = cli(capsys, "login", "--status")
    assert code == 0 and "no key stored" in out and "Store one with `autopilot-codex login`" in out
    code, out = cli(capsys, "logout")
    assert code == 0 and "no key was stored" in out
    code, out = cli(
        capsys,
        "login",
        "-",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--org",
        "org-x",
        stdin=STORED_KEY + "\n",
    )
    assert code == 0 and "Server: http://127.0.0.1:9/v1" in out and STORED_KEY not in out
    code, out = cli(capsys, "login", "--status")
    assert "(mode 600)" in out and "Organization: org-x" in out and STORED_KEY not in out
    credentials.path().chmod(0o644)  # loosened by hand: the status says so, and the fix
    code, out = cli(capsys, "login", "--status")
    assert f"others can read it; run `chmod 600 {credentials.path()}`" in out
    code, out = cli(capsys, "logout")
    assert code == 0 and "removed the stored key" in out and not credentials.path().exists()


def test_the_key_comes_from_one_place_only() -> None:
    with pytest.raises(BridgeError, match="not both"):
        login(from_env=True, from_stdin=True, base_url=None, organization=None)


def test_a_folder_where_the_login_file_belongs_is_named_and_nothing_is_left(
    capsys: pytest.CaptureFixture[str],
) -> None:
    where = credentials.path()
    (where / "kept").mkdir(parents=True)
    where.parent.chmod(0o700)
    code, out = cli(capsys, "login", "-", stdin=STORED_KEY + "\n")
    assert code == 1 and STORED_KEY not in out
    assert f"cannot write {where}: a folder stands where a file belongs" in out
    # The key was written to a temporary file first: it does not stay behind.
    assert sorted(p.name for p in where.parent.iterdir()) == ["credentials.json"]
    assert [p.name for p in where.iterdir()] == ["kept"]
    assert not (state_home() / "logs" / "bridge.log").exists()


def launcher_login(stdin: int) -> subprocess.CompletedProcess[bytes]:
    """`login` through the launcher in a session of its own: no controlling terminal."""
    return subprocess.run(
        [str(LAUNCHER), "login"],
        stdin=stdin,
        capture_output=True,
        env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable},
        start_new_session=True,
        timeout=60,
    )


def test_login_with_no_terminal_and_no_input_says_how_to_give_the_key() -> None:
    """`login </dev/null` was an internal error (EOFError), exit 3."""
    result = launcher_login(subprocess.DEVNULL)
    said = (result.stdout + result.stderr).decode()
    assert result.returncode == 2, said
    assert said.count("\n") == 1 and "internal error" not in said and "Warning" not in said
    assert "no terminal to type the key in" in said and "autopilot-codex login -" in said
    assert not credentials.path().exists()


def test_login_reads_a_key_typed_at_a_terminal_and_a_ctrl_d_is_no_key() -> None:
    for typed, code in ((STORED_KEY.encode() + b"\n", 0), (b"\x04", 2)):
        leader, follower = pty.openpty()
        login = subprocess.Popen(
            [str(LAUNCHER), "login"],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable},
            start_new_session=True,
        )
        try:
            assert login.stderr is not None
            # Typed before the prompt, it would be flushed: wait for the prompt, on the terminal
            # (or on stderr, where getpass writes it when the terminal cannot be opened).
            asked, ends = b"", [leader, login.stderr.fileno()]
            while b"(not shown): " not in asked:
                ready, _, _ = select.select(ends, [], [], 60)
                assert ready, asked
                asked += os.read(ready[0], 4096)
            os.write(leader, typed)
            out, err = login.communicate(timeout=60)
        finally:
            os.close(leader)
            os.close(follower)
        said = (out + err).decode()
        assert login.returncode == code, said
        assert STORED_KEY not in said and "internal error" not in said
    assert "no key was typed" in said
    assert credentials.api_key() == STORED_KEY
