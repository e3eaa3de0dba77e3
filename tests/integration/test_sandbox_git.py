"""Attack first: a route nobody has found yet makes the bridge's own git run a program. Here
the route is made on purpose: one override of the runner is taken out (as if it had never been
written) and the repository's config names a program for that key. The program finds no key,
no credential, no network and nothing of the user's it can write; the same program, unwalled,
finds them all (so each test can fail). The rounds driver's commit still commits, walled.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from autopilot_codex import credentials
from autopilot_codex.gitrepo import runner
from autopilot_codex.rounds.commit import commit_round
from autopilot_codex.sandbox import jail
from tests.conftest import PLANTED_KEY, git, make_repo

pytestmark = pytest.mark.skipif(not jail.probe().ok, reason="no working bubblewrap here")

STORE_SECRET = "store-password-42"


@dataclass
class World:
    repo: Path
    home: Path
    state: Path
    report: Path
    listener: socket.socket


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
    key = credentials.path(state)
    key.parent.mkdir(parents=True)
    key.write_text(f'{{"api_key": "{PLANTED_KEY}"}}\n')
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        listener.settimeout(30)
        yield World(repo, home, state, repo / ".git" / "route-report", listener)


def _program(world: World, report: str) -> Path:
    """What the route runs: it tries everything and says what it got, on stdout and, where it
    can write there, in `report`."""
    port = world.listener.getsockname()[1]
    script = world.home / "route.sh"
    script.write_text(
        f"""#!/bin/bash
{{
echo "ran"
echo "key: $(cat {credentials.path(world.state)} 2>&1)"
echo "store: $(cat {world.home}/.ssh/id_ed25519 2>&1)"
if (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; then echo "net: reached"; fi
if echo '{{"hooks": {{}}}}' > {world.home}/.claude/settings.json; then echo "settings: written"; fi
if mkdir -p {world.state}/active 2>/dev/null && touch {world.state}/active/planted 2>/dev/null
then echo "state: written"; fi
if echo "[core] hooksPath = x" >> {world.repo}/.git/config 2>/dev/null
then echo "gitconfig: written"; fi
}} 2>/dev/null | tee {report} 2>/dev/null
"""
    )
    script.chmod(0o755)
    return script


def _without(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    kept = tuple(pair for pair in runner.OVERRIDES if pair[0] != key)
    assert len(kept) == len(runner.OVERRIDES) - 1
    monkeypatch.setattr(runner, "OVERRIDES", kept)


def _diff_route(world: World, monkeypatch: pytest.MonkeyPatch) -> str:
    """A read of the Stop path (`git diff`), with `diff.external` no longer overridden: the
    external diff's output is git's own, so the program's report comes back as the diff."""
    _without(monkeypatch, "diff.external")
    script = _program(world, "/dev/null")
    git(world.repo, "config", "diff.external", str(script))
    (world.repo / "a.txt").write_text("two\n")
    return runner.run_git(world.repo, "diff", "HEAD")


def test_a_program_git_runs_on_the_stop_path_finds_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _diff_route(world, monkeypatch)
    assert "ran" in out
    assert PLANTED_KEY not in out and STORE_SECRET not in out
    assert "reached" not in out and "written" not in out
    assert (world.home / ".claude" / "settings.json").read_text() == "{}\n"
    assert not (world.state / "active").exists()
    assert "hooksPath = x" not in (world.repo / ".git" / "config").read_text()


@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_same_program_finds_everything(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _diff_route(world, monkeypatch)
    assert PLANTED_KEY in out and STORE_SECRET in out
    assert "net: reached" in out and "settings: written" in out and "state: written" in out
    assert "gitconfig: written" in out


def _commit_route(world: World, monkeypatch: pytest.MonkeyPatch) -> str:
    """The rounds driver's commit, with `core.fsmonitor` no longer overridden: the program runs
    while the commit writes the git directory, and leaves its report there."""
    _without(monkeypatch, "core.fsmonitor")
    script = _program(world, str(world.report))
    git(world.repo, "config", "core.fsmonitor", str(script))
    (world.repo / "a.txt").write_text("round's work\n")
    committed = commit_round(world.repo, "did the work", 1, "run-1")
    assert committed.sha and git(world.repo, "show", "HEAD:a.txt") == "round's work"
    return world.report.read_text()


def test_the_driver_s_commit_commits_walled_and_its_program_finds_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _commit_route(world, monkeypatch)
    assert "ran" in report
    assert PLANTED_KEY not in report and STORE_SECRET not in report
    assert "reached" not in report and "written" not in report
    assert "hooksPath = x" not in (world.repo / ".git" / "config").read_text()


@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_commit_s_program_finds_everything(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _commit_route(world, monkeypatch)
    assert PLANTED_KEY in report and "net: reached" in report
    assert "gitconfig: written" in report
