"""Install a pinned Claude Code CLI and run it headless against a fake Anthropic API.

``ensure_claude()`` installs ``@anthropic-ai/claude-code@CLAUDE_CODE_VERSION`` with npm into a
cache directory shared between test runs and returns the native binary.

``run_claude()`` runs one ``claude -p`` session from a clean environment (nothing of the
caller's ``CLAUDE*``/``ANTHROPIC*`` variables leaks in), with stream-json output and hook
events, and returns a ``ClaudeRun`` with the parsed events.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLAUDE_CODE_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
CACHE_ENV = "AUTOPILOT_CODEX_E2E_CACHE"
DEFAULT_MODEL = "claude-test"
DUMMY_API_KEY = "sk-ant-test-dummy"
INSTALL_TIMEOUT = 600

# Environment that keeps the CLI offline, quiet and free of side traffic.
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


# Pinned identity and dates so commits made by tests are reproducible.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "autopilot-e2e",
    "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+00:00",
    "GIT_COMMITTER_NAME": "autopilot-e2e",
    "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+00:00",
}


class ClaudeInstallError(RuntimeError):
    """The pinned Claude Code CLI could not be installed or does not run."""


# -- installation ------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "autopilot-codex-e2e"


def _platform_packages() -> list[str]:
    """Names of the per-platform native packages to look for, best match first."""
    system = {"linux": "linux", "darwin": "darwin", "windows": "win32"}.get(
        platform.system().lower(), platform.system().lower()
    )
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    names = [f"claude-code-{system}-{arch}"]
    if system == "linux":
        musl = platform.libc_ver()[0] != "glibc"
        variant = f"claude-code-linux-{arch}-musl"
        names = [variant, *names] if musl else [*names, variant]
    return names


def _find_binary(prefix: Path) -> Path | None:
    scope = prefix / "node_modules" / "@anthropic-ai"
    exe = "claude.exe" if platform.system() == "Windows" else "claude"
    for name in _platform_packages():
        candidate = scope / name / exe
        if candidate.is_file():
            return candidate
    return None


def claude_version(binary: Path) -> str | None:
    """The version ``binary --version`` reports, or None if it does not run."""
    try:
        with tempfile.TemporaryDirectory(prefix="cc-version-") as scratch:
            proc = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                env=_base_env(Path(scratch)),
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return proc.stdout.split()[0]


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def npm_install(
    prefix: Path, package: str, version: str, what: str, error: type[Exception]
) -> None:
    """A pinned npm package into its own cache prefix (replaced whole), or `error` saying why.
    Shared by the Claude Code and Codex harnesses."""
    npm = shutil.which("npm")
    if npm is None:
        raise error(f"npm is not on PATH; it is needed to install {what}")
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.mkdir(parents=True)
    # A private package.json keeps npm from walking up into an unrelated project.
    (prefix / "package.json").write_text('{"name": "autopilot-e2e-cache", "private": true}\n')
    cmd = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save"]
    # The native binary is used directly: no postinstall is needed.
    cmd += ["--ignore-scripts", "--loglevel=error", f"{package}@{version}"]
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            stdin=subprocess.DEVNULL,
            cwd=prefix,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise error(f"npm install {package}@{version} failed: {exc}") from exc
    if proc.returncode != 0:
        raise error(
            f"npm install {package}@{version} exited {proc.returncode}:\n{proc.stderr[-4000:]}"
        )


def ensure_claude(cache_dir: Path | None = None, version: str = CLAUDE_CODE_VERSION) -> Path:
    """Install ``@anthropic-ai/claude-code@<version>`` into the cache (once) and return the
    native binary. Safe to call from parallel processes. Raises ClaudeInstallError."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    prefix = cache / f"claude-code-{version}"
    with _file_lock(cache / f"claude-code-{version}.lock"):
        binary = _find_binary(prefix)
        if binary is not None and claude_version(binary) == version:
            return binary
        npm_install(prefix, PACKAGE, version, "Claude Code", ClaudeInstallError)
        binary = _find_binary(prefix)
        if binary is None:
            raise ClaudeInstallError(
                f"npm installed {PACKAGE}@{version} but no native binary for this platform "
                f"({', '.join(_platform_packages())}) is under {prefix}/node_modules"
            )
        found = claude_version(binary)
        if found != version:
            raise ClaudeInstallError(f"{binary} --version reports {found!r}, expected {version}")
        return binary


# -- running -----------------------------------------------------------------------------------


@dataclass
class ClaudeRun:
    """Outcome of one ``claude -p`` run."""

    cmd: list[str]
    rc: int | None
    stdout: str
    stderr: str
    wall_time: float
    timed_out: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)
    unparsed_lines: list[str] = field(default_factory=list)

    @property
    def result(self) -> dict[str, Any] | None:
        """The final ``{"type": "result", ...}`` event, if any."""
        event: dict[str, Any]
        for event in reversed(self.events):
            if event.get("type") == "result":
                return event
        return None

    @property
    def session_id(self) -> str | None:
        """Session id from the ``system/init`` event."""
        for event in self.events:
            if event.get("type") == "system" and event.get("subtype") == "init":
                return event.get("session_id")
        return None

    @property
    def ok(self) -> bool:
        result = self.result
        return (
            not self.timed_out
            and self.rc == 0
            and result is not None
            and result.get("subtype") == "success"
            and not result.get("is_error", False)
        )

    def events_of(self, type_: str, subtype: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if e.get("type") == type_ and (subtype is None or e.get("subtype") == subtype)
        ]

    def hook_events(self, hook_event: str | None = None) -> list[dict[str, Any]]:
        """``system`` events ``hook_started``/``hook_response`` (optionally of one hook event,
        e.g. ``"Stop"``)."""
        return [
            e
            for e in self.events
            if e.get("type") == "system"
            and e.get("subtype") in ("hook_started", "hook_response")
            and (hook_event is None or e.get("hook_event") == hook_event)
        ]

    def hook_responses(self, hook_event: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.hook_events(hook_event) if e.get("subtype") == "hook_response"]

    def assistant_texts(self) -> list[str]:
        texts = []
        for event in self.events_of("assistant"):
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    texts.append(block.get("text", ""))
        return texts

    def tool_uses(self) -> list[dict[str, Any]]:
        uses = []
        for event in self.events_of("assistant"):
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uses.append(block)
        return uses

    def describe(self, limit: int = 4000) -> str:
        """A compact summary for assertion messages."""
        return (
            f"cmd: {' '.join(self.cmd)}\nrc={self.rc} timed_out={self.timed_out} "
            f"wall={self.wall_time:.1f}s\n--- result ---\n{json.dumps(self.result)[:limit]}\n"
            f"--- stderr (tail) ---\n{self.stderr[-limit:]}\n"
            f"--- stdout (tail) ---\n{self.stdout[-limit:]}"
        )


def _base_env(tmpdir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "HOME": str(tmpdir),
        "TMPDIR": str(tmpdir),
        # Without SHELL the CLI picks the first shell it finds (zsh before bash where both are
        # installed); the contracts these tests pin are bash's, as for most users.
        "SHELL": "/bin/bash",
    }


def build_env(
    *,
    home: Path,
    tmpdir: Path,
    anthropic_url: str,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of a run (``env -i`` style)."""
    env = _base_env(tmpdir)
    env.update(
        {
            "HOME": str(home),
            "CLAUDE_CODE_TMPDIR": str(tmpdir),
            "ANTHROPIC_BASE_URL": anthropic_url,
            "ANTHROPIC_API_KEY": DUMMY_API_KEY,
            **QUIET_ENV,
        }
    )
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # bypassPermissions is refused as root otherwise
    env.update(extra_env or {})
    return env


def parse_stream_json(stdout: str) -> tuple[list[dict[str, Any]], list[str]]:
    events: list[dict[str, Any]] = []
    unparsed: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            unparsed.append(line)
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            unparsed.append(line)
    return events, unparsed


def claude_command(
    binary: Path,
    *,
    prompt: str,
    plugin_dir: Path | Sequence[Path] | None,
    model: str = DEFAULT_MODEL,
    extra_args: Sequence[str] = (),
) -> list[str]:
    cmd = [
        str(binary),
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-hook-events",
        "--model",
        model,
        "--permission-mode",
        "bypassPermissions",
    ]
    if plugin_dir is not None:
        dirs = [plugin_dir] if isinstance(plugin_dir, (str, os.PathLike)) else plugin_dir
        for d in dirs:
            cmd += ["--plugin-dir", str(d)]
    cmd += list(extra_args)
    return cmd


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_claude(
    binary: Path,
    *,
    workdir: Path,
    prompt: str,
    plugin_dir: Path | Sequence[Path] | None,
    anthropic_url: str,
    home: Path,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
    extra_args: Sequence[str] = (),
    model: str = DEFAULT_MODEL,
    stdin: bytes | None = None,
) -> ClaudeRun:
    """Run ``claude -p <prompt>`` in ``workdir`` and collect its stream-json output.

    The CLI gets a fresh short temp dir (socket paths must stay short) that is removed
    afterwards. On timeout the whole process group is killed and ``timed_out`` is set.
    """
    home.mkdir(parents=True, exist_ok=True)
    cmd = claude_command(
        binary, prompt=prompt, plugin_dir=plugin_dir, model=model, extra_args=extra_args
    )
    tmpdir = Path(tempfile.mkdtemp(prefix="cc-e2e-"))
    env = build_env(home=home, tmpdir=tmpdir, anthropic_url=anthropic_url, extra_env=extra_env)
    timed_out = False
    try:
        # Files instead of pipes: a straggling grandchild holding a pipe cannot hang us.
        with (
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
            tempfile.TemporaryFile() as given,
        ):
            # stream-json input (`--input-format stream-json`) is read from a file, never a pipe.
            given.write(stdin or b"")
            given.seek(0)
            start = time.monotonic()
            proc = subprocess.Popen(
                cmd,
                cwd=workdir,
                env=env,
                stdin=given if stdin is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            try:
                rc: int | None = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
                proc.wait()
                rc = None
            wall = time.monotonic() - start
            out.seek(0)
            err.seek(0)
            stdout = out.read().decode("utf-8", errors="replace")
            stderr = err.read().decode("utf-8", errors="replace")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    events, unparsed = parse_stream_json(stdout)
    return ClaudeRun(
        cmd=cmd,
        rc=rc,
        stdout=stdout,
        stderr=stderr,
        wall_time=wall,
        timed_out=timed_out,
        events=events,
        unparsed_lines=unparsed,
    )


# -- workdirs ----------------------------------------------------------------------------------


def git_env() -> dict[str, str]:
    """Environment for git calls made by tests: no inherited ``GIT_*`` (e.g. ``GIT_DIR`` when
    the suite runs inside a git hook), no user or system config, pinned identity and dates."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    return env


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with :func:`git_env` and return its stdout."""
    proc = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=git_env(),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def make_git_repo(path: Path) -> Path:
    """A fresh repository at ``path`` with one commit. Identity is also stored in the repo's
    own config, so commits made later from a clean environment (hooks, the Bash tool) work."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", GIT_ENV["GIT_AUTHOR_NAME"])
    git(path, "config", "user.email", GIT_ENV["GIT_AUTHOR_EMAIL"])
    git(path, "config", "commit.gpgsign", "false")
    (path / "README.md").write_text("# e2e workdir\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial commit")
    return path
