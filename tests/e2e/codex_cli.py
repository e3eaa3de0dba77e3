"""Install a pinned Codex CLI and run ``codex exec`` offline against a fake Responses API.

``ensure_codex()`` installs ``@openai/codex@CODEX_VERSION`` with npm into the same cache
directory as the Claude Code CLI (``$AUTOPILOT_CODEX_E2E_CACHE`` or
``~/.cache/autopilot-codex-e2e``) and returns the native binary.

``run_codex()`` runs one ``codex exec`` with a fresh ``HOME`` and ``CODEX_HOME``, a custom
``model_provider`` on 127.0.0.1, stdin from ``/dev/null`` and an outer timeout. Where the
machine allows it (``unshare -n``), the CLI runs in a network namespace that has only a
loopback device: Codex resolves outside hosts at start-up even with a loopback provider, and
there those lookups fail at once. Loopback ports of the test process (the fake model, a fake
manager) are relayed into the namespace over unix sockets (see ``netns_relay.py``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claude_cli import _file_lock, default_cache_dir, npm_install
from .netns_relay import UnixToTcp

CODEX_VERSION = "0.171.0"
PACKAGE = "@openai/codex"
# A bundled slug: with an unknown one Codex drops apply_patch from the tool list.
DEFAULT_MODEL = "gpt-5.5"
KEY_ENV = "FAKE_OPENAI_API_KEY"
DUMMY_API_KEY = "sk-codex-test-dummy"
INSTALL_TIMEOUT = 900
RELAY_SCRIPT = Path(__file__).with_name("netns_relay.py")
NETNS_ENV = "AUTOPILOT_CODEX_E2E_NETNS"


class CodexInstallError(RuntimeError):
    """The pinned Codex CLI could not be installed or does not run."""


# -- installation ------------------------------------------------------------------------------


def _target_triple() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(
        machine, machine
    )
    system = platform.system().lower()
    if system == "darwin":
        return f"{arch}-apple-darwin"
    return f"{arch}-unknown-linux-musl"


def _find_binary(prefix: Path) -> Path | None:
    # npm installs the native build as an aliased optional dependency, e.g. codex-linux-x64.
    scope = prefix / "node_modules" / "@openai"
    triple = _target_triple()
    for candidate in sorted(scope.glob(f"codex*/vendor/{triple}/**/codex")):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def codex_version(binary: Path) -> str | None:
    """The version ``binary --version`` reports (``codex-cli 0.171.0`` → ``0.171.0``)."""
    try:
        with tempfile.TemporaryDirectory(prefix="codex-version-") as scratch:
            proc = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                env=base_env(Path(scratch), Path(scratch) / "codex-home"),
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return None
    words = proc.stdout.split()
    if proc.returncode != 0 or not words:
        return None
    return words[-1]


def _npm_install(prefix: Path, version: str) -> None:
    npm_install(prefix, PACKAGE, version, "the Codex CLI", CodexInstallError)


def ensure_codex(cache_dir: Path | None = None, version: str = CODEX_VERSION) -> Path:
    """Install ``@openai/codex@<version>`` into the cache (once) and return the native binary.
    Safe to call from parallel processes. Raises CodexInstallError."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    prefix = cache / f"codex-{version}"
    with _file_lock(cache / f"codex-{version}.lock"):
        binary = _find_binary(prefix)
        if binary is not None and codex_version(binary) == version:
            return binary
        _npm_install(prefix, version)
        binary = _find_binary(prefix)
        if binary is None:
            raise CodexInstallError(
                f"npm installed {PACKAGE}@{version} but no native binary for "
                f"{_target_triple()} is under {prefix}/node_modules/@openai"
            )
        found = codex_version(binary)
        if found != version:
            raise CodexInstallError(f"{binary} --version reports {found!r}, expected {version}")
        return binary


# -- configuration -----------------------------------------------------------------------------


def base_env(home: Path, codex_home: Path) -> dict[str, str]:
    """A clean environment (``env -i`` style): nothing of the caller's ``OPENAI*``/``CODEX*``
    leaks in.

    ``TMPDIR`` is a folder beside ``CODEX_HOME``: Codex refuses to create its helper links
    in a ``CODEX_HOME`` under the temp dir, and then, with the system's bubblewrap installed,
    every sandboxed command fails ("bwrap: execvp codex-linux-sandbox")."""
    tmpdir = codex_home.parent / "codex-tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "TMPDIR": str(tmpdir),
        KEY_ENV: DUMMY_API_KEY,
    }


def provider_toml(base_url: str, model: str = DEFAULT_MODEL) -> str:
    """The ``config.toml`` lines that point Codex at a loopback Responses server."""
    return (
        f'model = "{model}"\n'
        'model_provider = "fake"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "\n"
        "[model_providers.fake]\n"
        'name = "Fake OpenAI (loopback)"\n'
        f'base_url = "{base_url}"\n'
        f'env_key = "{KEY_ENV}"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "stream_idle_timeout_ms = 20000\n"
        "\n"
        # Off: its metrics exporter flushes to an outside host at exit, which costs about 5 s
        # in a namespace without a network.
        "[analytics]\n"
        "enabled = false\n"
    )


def write_config(codex_home: Path, base_url: str, extra_toml: str = "") -> Path:
    """Write ``$CODEX_HOME/config.toml``: the provider first, then ``extra_toml``."""
    codex_home.mkdir(parents=True, exist_ok=True)
    path = codex_home / "config.toml"
    path.write_text(provider_toml(base_url) + ("\n" + extra_toml if extra_toml else ""))
    return path


# -- network namespace -------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def netns_prefix() -> tuple[str, ...] | None:
    """``unshare`` arguments that give a loopback-only network namespace here, or None when
    this machine does not allow one (then runs use the host network; see ``NETNS_NOTE``).
    ``AUTOPILOT_CODEX_E2E_NETNS=0`` turns it off."""
    if os.environ.get(NETNS_ENV, "").strip() == "0":
        return None
    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("ip") is None:
        return None
    for prefix in ((unshare, "-n"), (unshare, "-r", "-n")):
        try:
            probe = subprocess.run(
                [*prefix, "ip", "link", "set", "lo", "up"],
                capture_output=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return prefix
    return None


NETNS_NOTE = (
    "no loopback-only network namespace (unshare -n fails here, or AUTOPILOT_CODEX_E2E_NETNS=0): "
    "Codex runs on "
    "the host network and its start-up lookups of outside hosts may be slow"
)


# -- running -----------------------------------------------------------------------------------


@dataclass
class CodexRun:
    """Outcome of one ``codex exec`` run."""

    cmd: list[str]
    rc: int | None
    stdout: str
    stderr: str
    wall_time: float
    last_message: str | None
    netns: bool
    timed_out: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.rc == 0

    def items(self, item_type: str) -> list[dict[str, Any]]:
        """``item`` of every ``item.completed`` event of one type (``agent_message``,
        ``command_execution``, ``file_change``, ``error``...)."""
        return [
            e["item"]
            for e in self.events
            if e.get("type") == "item.completed"
            and isinstance(e.get("item"), dict)
            and e["item"].get("type") == item_type
        ]

    @property
    def thread_id(self) -> str | None:
        for event in self.events:
            if event.get("type") == "thread.started":
                return str(event.get("thread_id"))
        return None

    def describe(self, limit: int = 4000) -> str:
        """A compact summary for assertion messages."""
        return (
            f"cmd: {' '.join(self.cmd)}\nrc={self.rc} timed_out={self.timed_out} "
            f"netns={self.netns} wall={self.wall_time:.1f}s\n"
            f"--- last message ---\n{self.last_message!r}\n"
            f"--- stderr (tail) ---\n{self.stderr[-limit:]}\n"
            f"--- stdout (tail) ---\n{self.stdout[-limit:]}"
        )


def parse_jsonl(text: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    return events


def exec_command(
    binary: Path, prompt: str, last_message: Path, extra_args: Sequence[str] = ()
) -> list[str]:
    return [
        str(binary),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-o",
        str(last_message),
        *extra_args,
        prompt,
    ]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _wait(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[int | None, str, str, float]:
    # Files instead of pipes: a straggling grandchild holding a pipe cannot hang us.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            rc: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait()
            rc = None
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return (
            rc,
            out.read().decode("utf-8", errors="replace"),
            err.read().decode("utf-8", errors="replace"),
            wall,
        )


def run_codex(
    binary: Path,
    *,
    workdir: Path,
    prompt: str,
    home: Path,
    codex_home: Path,
    forward_ports: Sequence[int] = (),
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
    use_netns: bool = True,
) -> CodexRun:
    """Run ``codex exec --json <prompt>`` in ``workdir``. ``codex_home/config.toml`` must
    exist (see :func:`write_config`). ``forward_ports`` are the loopback ports of this process
    the run must reach (the fake model, a fake manager); they are relayed when the run is in
    its own network namespace. On timeout the process group is killed and ``timed_out`` set."""
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="codex-run-") as scratch:
        last = Path(scratch) / "last-message.txt"
        cmd = exec_command(binary, prompt, last, extra_args)
        env = base_env(home, codex_home)
        env["TMPDIR"] = scratch
        env.update(extra_env or {})
        prefix = netns_prefix() if use_netns else None
        with contextlib.ExitStack() as stack:
            if prefix is not None:
                relay = stack.enter_context(UnixToTcp(forward_ports))
                forwards = [f"--forward={spec}" for spec in relay.forwards()]
                cmd = [*prefix, sys.executable, str(RELAY_SCRIPT), *forwards, "--", *cmd]
            rc, stdout, stderr, wall = _wait(cmd, workdir, env, timeout)
        last_message = last.read_text() if last.exists() else None
    return CodexRun(
        cmd=cmd,
        rc=rc,
        stdout=stdout,
        stderr=stderr,
        wall_time=wall,
        last_message=last_message,
        netns=prefix is not None,
        timed_out=rc is None,
        events=parse_jsonl(stdout),
    )


def codex_cli(
    binary: Path, *args: str, home: Path, codex_home: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``codex <args>`` (e.g. ``plugin add ...``) with the same clean environment, in the
    loopback-only namespace where there is one."""
    home.mkdir(parents=True, exist_ok=True)
    cmd = [str(binary), *args]
    prefix = netns_prefix()
    if prefix is not None:
        cmd = [*prefix, *cmd]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env=base_env(home, codex_home),
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )
