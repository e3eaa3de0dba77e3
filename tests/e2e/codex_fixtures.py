"""Fixtures for end-to-end tests that drive the real Codex CLI against a fake Responses API.

Imported by ``conftest.py``; ``git_repo`` and ``home`` come from there."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from .codex_cli import (
    CODEX_VERSION,
    NETNS_NOTE,
    CodexInstallError,
    CodexRun,
    ensure_codex,
    netns_prefix,
    run_codex,
)
from .codex_cli import write_config as write_codex_config
from .fake_codex_model import FakeCodexModel

# What the run should know without failing for it, said in the summary (not as a warning:
# the suite treats warnings as errors).
NOTES: list[str] = []


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The pinned Codex native binary (installed once into the shared cache).

    Fails when ``CI`` is set and the CLI cannot be installed; skips otherwise."""
    try:
        binary = ensure_codex()
    except CodexInstallError as exc:
        problem = str(exc)
    else:
        if netns_prefix() is None and NETNS_NOTE not in NOTES:
            NOTES.append(NETNS_NOTE)
        return binary
    message = f"Codex CLI {CODEX_VERSION} is unavailable for e2e tests: {problem}"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture
def fake_codex(git_repo: Path, tmp_path: Path) -> Iterator[FakeCodexModel]:
    """A running scripted Responses API; ``{workdir}`` in scripted calls is ``git_repo``.

    Every request is also logged to ``<tmp_path>/codex-requests.jsonl``."""
    log = tmp_path / "codex-requests.jsonl"
    with FakeCodexModel(workdir=git_repo, log_path=log) as fake:
        yield fake


@pytest.fixture
def codex_home(tmp_path: Path, fake_codex: FakeCodexModel) -> Path:
    """A fresh ``CODEX_HOME`` whose ``config.toml`` points at ``fake_codex``; tests may append
    tables (hooks, trust) to it."""
    path = tmp_path / "codex-home"
    write_codex_config(path, fake_codex.base_url)
    return path


CodexRunner = Callable[..., CodexRun]


@pytest.fixture
def codex(
    codex_bin: Path, git_repo: Path, home: Path, codex_home: Path, fake_codex: FakeCodexModel
) -> CodexRunner:
    """``codex(prompt, extra_args=..., forward_ports=..., **kwargs)``: :func:`run_codex` with
    this test's binary, repo, homes and fake model filled in. ``forward_ports`` adds loopback
    ports (e.g. a fake manager) to the fake model's."""

    def runner(prompt: str, *, forward_ports: Sequence[int] = (), **kwargs: Any) -> CodexRun:
        options: dict[str, Any] = {
            "workdir": git_repo,
            "home": home,
            "codex_home": codex_home,
            "timeout": 120,
        }
        options.update(kwargs)
        binary = options.pop("binary", codex_bin)
        ports = [fake_codex.port, *forward_ports]
        return run_codex(binary, prompt=prompt, forward_ports=ports, **options)

    return runner
