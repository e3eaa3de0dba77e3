"""The launcher's first-use setup (issue 36): its lock dies with its holder, so a setup killed
at any step never makes the next command wait it out, and a venv it half built is rebuilt, never
used. Both locks are tried: flock(1) where the system has it, and the link naming its owner
that macOS (no flock) gets; a PATH without flock stands for the latter.

Offline: `uv` is a stub that builds a real venv without pip and "installs" the requirements as
a .pth to this interpreter's packages. It touches a file at each step and may pause there, so
the test kills the setup at exactly that step, by its whole process group with SIGKILL.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import LAUNCHER, make_repo

# The commands the launcher runs on its way to a venv, and git for `status`.
SHELL_TOOLS = ("bash", "sh", "cat", "cksum", "cut", "mkdir", "rm", "rmdir", "ln", "mv", "sleep")
TOOLS = (*SHELL_TOOLS, "readlink", "ps", "uname", "git")
STEPS = ("lock-taken", "venv-created", "pip-mid-install", "before-marker")
BOUND_S = 60  # the bar: the next command succeeds or says why within it

STUB_UV = f"""#!{sys.executable}
import os, shutil, subprocess, sys, time
from pathlib import Path
from typing import IO

signals = Path(os.environ["STUB_SIGNALS"])

def reached(step):
    (signals / step).touch()
    if os.environ.get("STUB_PAUSE") == step:
        while not (signals / "go").exists():
            time.sleep(0.02)

args = sys.argv[1:]
if args[0] == "venv":
    reached("lock-taken")
    python = args[args.index("--python") + 1]
    subprocess.run([python, "-m", "venv", "--without-pip", args[-1]], check=True)
    reached("venv-created")
else:
    python = args[args.index("--python") + 1]
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip())
    # Half a package, as a killed installer leaves it.
    (purelib / "openai").mkdir()
    (purelib / "openai" / "__init__.py").write_text("raise ImportError('half installed')\\n")
    reached("pip-mid-install")
    shutil.rmtree(purelib / "openai")
    (purelib / "host-packages.pth").write_text({sysconfig.get_paths()["purelib"]!r} + "\\n")
    reached("before-marker")
"""


class Setup:
    """A state home, the stub tools, and the launcher's environment for one lock kind."""

    def __init__(self, tmp: Path, state_home: Path, lock: str) -> None:
        self.home = state_home
        self.lock = lock
        self.signals = tmp / "signals"
        self.signals.mkdir()
        tools = tmp / "tools"
        tools.mkdir()
        wanted = TOOLS + (("flock",) if lock == "flock" else ())
        for tool in wanted:
            found = shutil.which(tool)
            assert found is not None, f"{tool} is not installed"
            (tools / tool).symlink_to(found)
        (tools / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (tools / "uv").write_text(STUB_UV)
        for script in ("python3", "uv"):
            (tools / script).chmod(0o755)
        self.env = {k: v for k, v in os.environ.items() if k != "AUTOPILOT_CODEX_PYTHON"}
        self.env.update(PATH=str(tools), STUB_SIGNALS=str(self.signals))
        self.repo = make_repo(tmp / "repo")

    @property
    def venv(self) -> Path:
        return self.home / "venv"

    def start(self, pause: str, *args: str) -> subprocess.Popen[bytes]:
        """A setup that pauses at `pause`, in its own process group, its stderr in a file."""
        log = self.signals / f"stderr-{len(list(self.signals.glob('stderr-*')))}"
        with log.open("wb") as stderr:
            return subprocess.Popen(
                [str(LAUNCHER), *(args or ("bootstrap",))],
                env={**self.env, "STUB_PAUSE": pause},
                cwd=self.repo,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )

    def wait_for(self, what: Path | str, text: str = "") -> None:
        path = self.signals / what if isinstance(what, str) else what
        deadline = time.monotonic() + BOUND_S
        while not (path.exists() and text in path.read_text(errors="replace")):
            assert time.monotonic() < deadline, f"never saw {path} {text!r}"
            time.sleep(0.02)

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LAUNCHER), *args],
            env={**self.env, **env},
            cwd=self.repo,
            capture_output=True,
            text=True,
            timeout=BOUND_S,
            stdin=subprocess.DEVNULL,
        )

    def built(self) -> bool:
        """The venv is whole: its marker is there and its python imports the requirements."""
        python = self.venv / "bin" / "python"
        if not python.exists():
            return False
        check = subprocess.run([str(python), "-c", "import openai, pydantic"], capture_output=True)
        return (self.venv / ".autopilot-codex-stamp").exists() and check.returncode == 0


@pytest.fixture(params=["flock", "link"])
def setup(request: pytest.FixtureRequest, tmp_path: Path, isolated: Path) -> Iterator[Setup]:
    made = Setup(tmp_path, isolated, request.param)
    yield made
    (made.signals / "go").touch()  # no paused stub outlives its test


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=BOUND_S)


def taken_once_dead(lock: IO[str]) -> None:
    """The lock, taken as soon as every process of the killed build has died: the group's
    leader is reaped at once, its children a moment later on a loaded machine."""
    deadline = time.monotonic() + BOUND_S
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.mark.parametrize("step", STEPS)
def test_a_setup_killed_at_any_step_leaves_nothing_the_next_command_waits_for(
    setup: Setup, step: str
) -> None:
    killed = setup.start(step)
    setup.wait_for(step)
    kill_group(killed)
    # What the killed setup left: its step, naming it, and (for the link) its lock.
    assert (setup.home / ".bootstrap.step").read_text().startswith(f"{killed.pid}|")
    if setup.lock == "link":
        assert (setup.home / ".bootstrap.owner").readlink().as_posix().startswith(f"{killed.pid}|")
    else:  # the kernel lets go of the lock with the last process of the build
        with (setup.home / ".bootstrap.flock").open("a") as lock:
            taken_once_dead(lock)
    assert not setup.built()

    following = setup.run("status")
    assert following.returncode == 0, following.stderr
    assert "no loop" in following.stdout.lower(), following.stdout
    # Taken at once: no wait for the dead holder, and the half-built venv built again.
    assert "waiting for" not in following.stderr, following.stderr
    assert "[1/3] creating the venv" in following.stderr, following.stderr
    assert "Python environment ready." in following.stderr
    assert setup.built()
    assert not (setup.home / ".bootstrap.step").exists()
    assert not (setup.home / ".bootstrap.owner").is_symlink()


def test_an_earlier_versions_lock_folder_is_no_wait(setup: Setup) -> None:
    """The 301.8 s of issue 36: an empty `.bootstrap.lock` left by an earlier version."""
    (setup.home / ".bootstrap.lock").mkdir(parents=True)
    following = setup.run("bootstrap")
    assert following.returncode == 0, following.stderr
    assert "waiting for" not in following.stderr
    assert not (setup.home / ".bootstrap.lock").exists()
    assert setup.built()


def test_a_live_setup_is_waited_for_and_said_so_at_most_the_cap(setup: Setup) -> None:
    holder = setup.start("pip-mid-install")
    setup.wait_for("pip-mid-install")

    capped = setup.run("bootstrap", AUTOPILOT_CODEX_BOOTSTRAP_WAIT_S="1")
    assert capped.returncode == 1
    said = capped.stderr.strip().splitlines()
    assert said[0].startswith(f"autopilot-codex: waiting for process {holder.pid} (installing")
    assert said[-1].startswith(f"autopilot-codex: process {holder.pid} (installing its packages)")
    assert "is still setting up" in said[-1] and "after 1 s" in said[-1]
    assert "[1/3]" not in capped.stderr  # it never built beside the holder

    waiter = setup.start("", "bootstrap")
    waiter_log = setup.signals / "stderr-1"
    setup.wait_for(waiter_log, f"waiting for process {holder.pid}")
    (setup.signals / "go").touch()
    assert holder.wait(timeout=BOUND_S) == 0
    assert waiter.wait(timeout=BOUND_S) == 0
    waited = waiter_log.read_text()
    assert waited.count("waiting for") == 1, waited
    assert "[1/3]" not in waited  # the holder's build was the one
    assert setup.built()


def test_a_hook_never_runs_a_half_built_venv(setup: Setup, tmp_path: Path) -> None:
    killed = setup.start("pip-mid-install")
    setup.wait_for("pip-mid-install")
    kill_group(killed)
    assert (setup.venv / "bin" / "python").exists()
    # A loop runs somewhere, so the hook gets past its first line.
    (setup.home / "active").mkdir()
    (setup.home / "active" / "other-0123").write_text("{}")
    hook = subprocess.run(
        [str(LAUNCHER), "hook", "Stop"],
        env=setup.env,
        cwd=setup.repo,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        input="{}",
    )
    assert hook.returncode == 0
    assert "being set up; this hook was skipped" in hook.stderr, hook.stderr
    # It set the venv up in the background.
    setup.wait_for(setup.venv / ".autopilot-codex-stamp")
    deadline = time.monotonic() + BOUND_S
    while (setup.home / ".bootstrap.step").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert setup.built()


def started_at(pid: int) -> str:
    """A process's start time as the launcher reads it (`ps -o lstart=`)."""
    ps = ["ps", "-o", "lstart=", "-p", str(pid)]
    return subprocess.run(ps, capture_output=True, text=True, check=True).stdout.rstrip("\n")


@pytest.mark.parametrize(
    ("names", "waits"),
    [
        ("this process", True),
        ("this pid, another start time", False),  # the pid was reused: its owner is gone
        ("another host", True),  # cannot be asked from here: waited for, never taken
    ],
)
def test_the_link_lock_is_taken_only_from_an_owner_that_is_gone(
    tmp_path: Path, isolated: Path, names: str, waits: bool
) -> None:
    setup = Setup(tmp_path, isolated, "link")
    host = os.uname().nodename
    owner = {
        "this process": f"{os.getpid()}|{host}|{started_at(os.getpid())}",
        "this pid, another start time": f"{os.getpid()}|{host}|Thu Jan  1 00:00:00 1970",
        "another host": f"{os.getpid()}|{host}.elsewhere|{started_at(os.getpid())}",
    }[names]
    setup.home.mkdir()
    (setup.home / ".bootstrap.owner").symlink_to(owner)
    result = setup.run("bootstrap", AUTOPILOT_CODEX_BOOTSTRAP_WAIT_S="1")
    if waits:
        assert result.returncode == 1
        where = f" on {host}.elsewhere" if names == "another host" else ""
        assert f"waiting for process {os.getpid()}{where} (starting)" in result.stderr
        assert "is still setting up" in result.stderr and "[1/3]" not in result.stderr
        assert (setup.home / ".bootstrap.owner").readlink().as_posix() == owner
    else:
        assert result.returncode == 0, result.stderr
        assert "waiting for" not in result.stderr and setup.built()
        assert not (setup.home / ".bootstrap.owner").is_symlink()


def test_a_wait_cap_that_is_no_number_is_said_and_the_default_used(
    tmp_path: Path, isolated: Path
) -> None:
    setup = Setup(tmp_path, isolated, "flock")
    result = setup.run("bootstrap", AUTOPILOT_CODEX_BOOTSTRAP_WAIT_S="soon")
    assert result.returncode == 0, result.stderr
    assert "AUTOPILOT_CODEX_BOOTSTRAP_WAIT_S=soon is not accepted" in result.stderr
    assert setup.built()


def test_a_file_system_that_cannot_lock_files_gets_the_link(tmp_path: Path, isolated: Path) -> None:
    setup = Setup(tmp_path, isolated, "link")
    # flock(1) on a file system without locks (say some network mounts) fails this way.
    flock = setup.env["PATH"] + "/flock"
    Path(flock).write_text("#!/bin/sh\necho 'flock: 9: No locks available' >&2\nexit 71\n")
    Path(flock).chmod(0o755)
    killed = setup.start("lock-taken")
    setup.wait_for("lock-taken")
    assert (setup.home / ".bootstrap.owner").readlink().as_posix().startswith(f"{killed.pid}|")
    kill_group(killed)
    following = setup.run("bootstrap")
    assert following.returncode == 0, following.stderr
    assert "waiting for" not in following.stderr and setup.built()
