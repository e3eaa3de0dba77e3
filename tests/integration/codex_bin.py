"""The pinned Codex CLI for the `codex` manager backend's integration tests.

Installed with npm into the same cache as the end-to-end suites (`$AUTOPILOT_CODEX_E2E_CACHE`
or `~/.cache/autopilot-codex-e2e`, one `codex-<version>` prefix), so either suite reuses the
other's install.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.e2e.claude_cli import _file_lock, default_cache_dir

CODEX_VERSION = "0.171.0"
PACKAGE = "@openai/codex"


class CodexUnavailable(RuntimeError):
    """The pinned Codex CLI could not be installed or does not run."""


def _binary(prefix: Path) -> Path | None:
    # The native build is an aliased optional dependency, e.g. @openai/codex-linux-x64.
    found = sorted((prefix / "node_modules" / "@openai").glob("codex-*/vendor/*/bin/codex"))
    return found[0] if found else None


def _version(binary: Path, scratch: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "CODEX_HOME": str(scratch)}
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, env=env
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.split()[-1] if done.returncode == 0 and done.stdout.split() else ""


def ensure_codex(scratch: Path, version: str = CODEX_VERSION) -> Path:
    """The native `codex` binary of `version`, installed once; raises CodexUnavailable."""
    prefix = default_cache_dir() / f"codex-{version}"
    with _file_lock(default_cache_dir() / f"codex-{version}.lock"):
        binary = _binary(prefix)
        if binary is None or _version(binary, scratch) != version:
            npm = shutil.which("npm")
            if npm is None:
                raise CodexUnavailable("npm is not on PATH")
            shutil.rmtree(prefix, ignore_errors=True)
            prefix.mkdir(parents=True)
            (prefix / "package.json").write_text('{"name": "codex-cache", "private": true}\n')
            cmd = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund"]
            cmd += ["--no-save", "--ignore-scripts", "--loglevel=error", f"{PACKAGE}@{version}"]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=prefix)
            binary = _binary(prefix)
            if done.returncode != 0 or binary is None:
                raise CodexUnavailable(f"npm install {PACKAGE}@{version}: {done.stderr[-2000:]}")
        if _version(binary, scratch) != version:
            raise CodexUnavailable(f"{binary} does not report version {version}")
        return binary
