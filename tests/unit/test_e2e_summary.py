"""A run whose e2e tests could not get the Claude Code CLI says so in its summary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_cli_is_loud_in_the_summary(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")
    }
    # An empty cache and no npm on PATH: the pinned CLI cannot be installed.
    env.update(
        AUTOPILOT_CODEX_E2E_CACHE=str(tmp_path / "cache"), PATH=str(Path(sys.executable).parent)
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "tests/e2e/test_install.py::test_plugin_validates_strictly",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr  # skipped, not failed, outside CI
    assert "E2E TESTS NOT RUN" in proc.stdout
    assert "npm is not on PATH" in proc.stdout.split("E2E TESTS NOT RUN")[1]
