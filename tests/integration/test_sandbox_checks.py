"""Attack first: a check runs the implementer's code, so whatever it tries from inside the
supervisor's sandbox must find nothing to steal and nothing of the loop's to change.

Each attack runs twice, the same command: unwalled (the `unwalled` fixture) it succeeds, which
is what makes the walled run's failure mean something. The state home is at its default place
in the user's home, as a user has it: hidden by the sandbox's own rule, not by the private
`/tmp` that covers the test's other folders.
"""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from autopilot_codex import credentials
from autopilot_codex.checks.run import CheckSpec, run_checks
from autopilot_codex.checks.watch import Watch
from autopilot_codex.sandbox import jail, places
from tests.conftest import PLANTED_KEY, make_repo

pytestmark = pytest.mark.skipif(not jail.probe().ok, reason="no working bubblewrap here")

HELPER_SECRET = "helper-secret-0123456789"
STORE_SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- store-password-42"


@dataclass
class World:
    repo: Path
    home: Path
    state: Path
    port: int
    connected: threading.Event


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    home = tmp_path / "user-home"
    state = home / ".autopilot-codex"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(state))
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{}\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(STORE_SECRET + "\n")
    (home / "notes.txt").write_text("plain\n")
    key = credentials.path(state)
    key.parent.mkdir(parents=True)
    key.write_text(f'{{"api_key": "{PLANTED_KEY}"}}\n')
    (state / "run").mkdir()
    (state / "run" / "helper-x.secret").write_text(HELPER_SECRET)
    (state / "config.json").write_text("{}\n")
    repo = make_repo(tmp_path / "repo")
    connected = threading.Event()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        server.settimeout(0.2)
        stop = threading.Event()

        def serve() -> None:
            while not stop.is_set():
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                connected.set()
                conn.close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        yield World(repo, home, state, server.getsockname()[1], connected)
        stop.set()
        thread.join(10)


def _check(world: World, command: str) -> tuple[str, str]:
    (result,) = run_checks(world.repo, [CheckSpec(command)], timeout_s=60)
    return result.status, result.tail


READS = {
    "the key file": ("cat {state}/secret/credentials.json", PLANTED_KEY),
    "the helper's secret": ("cat {state}/run/helper-x.secret", HELPER_SECRET),
    "a credential store": ("cat {home}/.ssh/id_ed25519", "store-password-42"),
}


@pytest.mark.parametrize("target", list(READS))
def test_a_check_cannot_read_a_secret(world: World, target: str) -> None:
    command, secret = READS[target]
    status, tail = _check(world, command.format(state=world.state, home=world.home))
    assert status == "fail" and secret not in tail


@pytest.mark.parametrize("target", list(READS))
@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_same_check_reads_it(world: World, target: str) -> None:
    command, secret = READS[target]
    status, tail = _check(world, command.format(state=world.state, home=world.home))
    # The tail is redacted only for values that look like keys in the bridge's environment.
    assert status == "pass" and (secret in tail or target == "the key file")


WRITES = {
    "the user's settings": "{home}/.claude/settings.json",
    "the state home": "{state}/config.json",
    "a new file in the state home": "{state}/active/planted",
}


def _write(world: World, target: str) -> tuple[str, Path]:
    path = Path(WRITES[target].format(home=world.home, state=world.state))
    command = f"mkdir -p {path.parent} && echo '{{\"hooks\": {{}}}}' > {path}"
    status, _ = _check(world, command)
    return status, path


@pytest.mark.parametrize("target", list(WRITES))
def test_a_check_cannot_write_settings_or_the_state_home(world: World, target: str) -> None:
    status, path = _write(world, target)
    assert status == "fail"
    assert not path.exists() or "hooks" not in path.read_text()


@pytest.mark.parametrize("target", list(WRITES))
@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_same_check_writes_them(world: World, target: str) -> None:
    status, path = _write(world, target)
    assert status == "pass" and "hooks" in path.read_text()


def _connect(world: World) -> str:
    command = f"exec 3<>/dev/tcp/127.0.0.1/{world.port} && echo reached"
    status, _ = _check(world, command)
    return status


def test_a_check_reaches_no_listener_on_the_loopback(world: World) -> None:
    assert _connect(world) == "fail"
    assert not world.connected.is_set()


@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_same_check_reaches_it(world: World) -> None:
    assert _connect(world) == "pass"
    assert world.connected.wait(30)


def test_checks_network_in_the_config_lets_a_check_reach_it(world: World) -> None:
    (world.state / "config.json").write_text('{"checks_network": true}\n')
    assert _connect(world) == "pass"
    assert world.connected.wait(30)


def test_a_walled_check_still_does_a_test_suite_s_work(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The work tree, TMPDIR and a private /tmp are writable; the home is readable."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    command = (
        f"echo built > out.txt && echo t > /tmp/scratch && "
        f'echo t > "$TMPDIR/scratch" && cat {world.home}/notes.txt && git status --short'
    )
    status, tail = _check(world, command)
    assert status == "pass" and "plain" in tail and "out.txt" in tail
    assert (world.repo / "out.txt").read_text() == "built\n"
    assert (tmpdir / "scratch").read_text() == "t\n"


def test_a_walled_check_cannot_rewrite_the_git_config(world: World) -> None:
    """The files git and the hosts run programs from stay read-only inside the work tree."""
    before = (world.repo / ".git" / "config").read_text()
    status, _ = _check(world, "git config core.fsmonitor /bin/true")
    assert status == "fail" and (world.repo / ".git" / "config").read_text() == before


def _running(token: str) -> bool:
    for entry in Path("/proc").iterdir():
        try:
            if token.encode() in (entry / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def test_a_walled_check_past_its_limit_is_killed_with_all_it_started(world: World) -> None:
    (result,) = run_checks(world.repo, [CheckSpec("sleep 6001 & echo started; wait")], timeout_s=1)
    assert result.status == "timeout" and "started" in result.tail
    assert not _running("sleep\x006001")


def test_a_walled_check_a_signal_ended_says_which(world: World) -> None:
    (result,) = run_checks(world.repo, [CheckSpec("kill -TERM $$")], timeout_s=60)
    assert (result.status, result.exit_code, result.note) == ("fail", None, "killed by signal 15")


def test_a_tmpdir_in_the_home_is_not_made_writable(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook's environment could name the settings folder as TMPDIR: it stays read-only."""
    monkeypatch.setenv("TMPDIR", str(world.home / ".claude"))
    status, path = _write(world, "the user's settings")
    assert status == "fail" and "hooks" not in path.read_text()


def test_the_password_database_s_home_is_hidden_too(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HOME pointed elsewhere does not bring the real home's credentials into view."""
    real = tmp_path / "real-home"
    (real / ".aws").mkdir(parents=True)
    (real / ".aws" / "credentials").write_text("aws_secret_access_key = real-secret-9\n")
    (real / ".gnupg").mkdir()
    (real / ".gnupg" / "private.key").write_text("gpg-private-7\n")
    monkeypatch.setattr(places, "own_home", lambda: str(real))
    for target, secret in ((".aws/credentials", "real-secret-9"), (".gnupg/private.key", "gpg-")):
        status, tail = _check(world, f"cat {real / target}")
        assert status == "fail" and secret not in tail


def _agent(world: World) -> tuple[socket.socket, str]:
    path = world.home / "agent.sock"
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(path))
    agent.listen(1)
    connect = f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r})"
    return agent, f"{sys.executable} -c {shlex.quote(connect)}"


def test_a_check_reaches_no_agent_socket(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, command = _agent(world)
    monkeypatch.setenv("SSH_AUTH_SOCK", agent.getsockname())
    with agent:
        assert _check(world, command)[0] == "fail"


@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_same_check_reaches_it_the_agent(world: World) -> None:
    agent, command = _agent(world)
    with agent:
        assert _check(world, command)[0] == "pass"


def _watched_write(world: World) -> tuple[str, bool, str]:
    config = world.state / "config.json"
    command = f'echo \'{{"rails_allow": [".*"]}}\' > {config}'
    (result,) = run_checks(world.repo, [CheckSpec(command)], timeout_s=60, watch=Watch([config]))
    return result.status, "tampering" in result.note, config.read_text()


def test_a_walled_check_cannot_change_a_watched_file_at_all(world: World) -> None:
    assert _watched_write(world) == ("fail", False, "{}\n")


@pytest.mark.usefixtures("unwalled")
def test_unwalled_a_watched_file_is_put_back_and_named(world: World) -> None:
    assert _watched_write(world) == ("fail", True, "{}\n")


def _hunt_environments(world: World) -> str:
    """Another process of the user holds the key in its environment (a host it was exported
    to); the check greps every process's environment for it."""
    holder = subprocess.Popen(["sleep", "600"], env={"OPENAI_API_KEY": PLANTED_KEY})
    try:
        hunt = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c PLANTEDKEY"
        return _check(world, hunt)[0]
    finally:
        holder.kill()
        holder.wait()


def test_a_check_sees_no_other_process_s_environment(world: World) -> None:
    assert _hunt_environments(world) == "fail"  # grep -c found nothing


@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_same_check_finds_the_key_there(world: World) -> None:
    assert _hunt_environments(world) == "pass"
