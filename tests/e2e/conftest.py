"""Fixtures for end-to-end tests that drive the real Claude Code CLI against a fake API."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI

from .claude_cli import (
    CLAUDE_CODE_VERSION,
    ClaudeInstallError,
    ClaudeRun,
    ensure_claude,
    make_git_repo,
    run_claude,
)
from .codex_fixtures import NOTES, codex, codex_bin, codex_home, fake_codex  # noqa: F401
from .fake_anthropic import FakeAnthropic

E2E_DIR = Path(__file__).parent
# Why the CLI could not be had, once per session: a skipped e2e run must not look like a pass.
_UNAVAILABLE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: end-to-end tests that run the real Claude Code CLI offline"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Hooks in a conftest see every collected item; mark only those under this directory.
    for item in items:
        if E2E_DIR in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned Claude Code native binary (installed once into the shared cache).

    Fails when ``CI`` is set and the CLI cannot be installed; skips otherwise."""
    try:
        return ensure_claude()
    except ClaudeInstallError as exc:
        problem = str(exc)
    message = f"Claude Code {CLAUDE_CODE_VERSION} is unavailable for e2e tests: {problem}"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(message, pytrace=False)
    if message not in _UNAVAILABLE:
        _UNAVAILABLE.append(message)
    pytest.skip(message)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Said loudly at the end, where a reader looks: no e2e test ran against Claude Code."""
    if NOTES:
        terminalreporter.section("E2E NOTES", sep="-")
        for note in NOTES:
            terminalreporter.write_line(note)
    if not _UNAVAILABLE:
        return
    terminalreporter.section("E2E TESTS NOT RUN", sep="!", red=True, bold=True)
    for message in _UNAVAILABLE:
        terminalreporter.write_line(message, red=True, bold=True)
    terminalreporter.write_line(
        "Every test that needs the real Claude Code CLI was skipped; set CI=1 to make this "
        "a failure.",
        red=True,
    )


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A fresh git repository (one commit, pinned identity) to run Claude Code in."""
    return make_git_repo(tmp_path / "work")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh HOME for one Claude Code run (receives ~/.claude, transcripts, plugin data)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def fake_anthropic(git_repo: Path, tmp_path: Path) -> Iterator[FakeAnthropic]:
    """A running fake Messages API; ``{workdir}`` in scripted tool inputs is ``git_repo``.

    Every request is also logged to ``<tmp_path>/anthropic-requests.jsonl``."""
    with FakeAnthropic(workdir=git_repo, log_path=tmp_path / "anthropic-requests.jsonl") as fake:
        yield fake


ClaudeRunner = Callable[..., ClaudeRun]


@pytest.fixture
def claude(
    claude_bin: Path, git_repo: Path, home: Path, fake_anthropic: FakeAnthropic
) -> ClaudeRunner:
    """``claude(prompt, plugin_dir=..., **kwargs)``: :func:`run_claude` with this test's binary,
    repo, home and fake API filled in (any of them can be overridden by keyword)."""

    def runner(
        prompt: str,
        plugin_dir: Path | Sequence[Path] | None = None,
        *,
        extra_env: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> ClaudeRun:
        options: dict[str, Any] = {
            "workdir": git_repo,
            "home": home,
            "anthropic_url": fake_anthropic.url,
            "timeout": 120,
        }
        options.update(kwargs)
        binary = options.pop("binary", claude_bin)
        return run_claude(
            binary, prompt=prompt, plugin_dir=plugin_dir, extra_env=extra_env, **options
        )

    return runner


@pytest.fixture
def openai_fake() -> Iterator[FakeOpenAI]:
    """The manager: answers only what a scenario queues (anything else gets a 503)."""
    with FakeOpenAI() as server:
        yield server
