"""A walled check's tools write their caches in the home: those writes land in a folder of the
loop's own (in the state home), kept for the loop's next check, never in the real home, and
never next to a credential store.

Harmless work first: the same writes failed walled before the loop had such a folder (a
read-only home), which read a user's green suite as red.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from autopilot_codex.checks.run import CheckSpec, run_checks
from autopilot_codex.paths import project_dir
from autopilot_codex.sandbox import caches, jail
from tests.conftest import make_repo

pytestmark = pytest.mark.skipif(not jail.probe().ok, reason="no working bubblewrap here")

# Read before any fixture moves HOME.
RUSTUP_HOME = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
CARGO_SECRET = 'token = "cio-registry-token-42"'


@dataclass
class World:
    repo: Path
    home: Path
    state: Path

    @property
    def own(self) -> Path:
        return project_dir(self.repo, self.state) / caches.FOLDER


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    home = tmp_path / "user-home"
    state = home / ".autopilot-codex"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(state))
    for env in ("XDG_CACHE_HOME", "CARGO_HOME", "GOCACHE", "GOMODCACHE", "npm_config_cache"):
        monkeypatch.delenv(env, raising=False)
    # A user who has run each tool once: the cache folders exist, and cargo's credentials
    # sit beside its registry.
    for rel in (".cache/tool", ".npm/_logs", ".cargo/registry"):
        (home / rel).mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text(f"[registry]\n{CARGO_SECRET}\n")
    state.mkdir()
    (state / "config.json").write_text("{}\n")
    yield World(make_repo(tmp_path / "repo"), home, state)


def _check(world: World, command: str) -> tuple[str, str]:
    (result,) = run_checks(world.repo, [CheckSpec(command)], timeout_s=60)
    return result.status, result.tail


WRITES = (".cache/tool/x", ".npm/_logs/x", ".cargo/registry/x")


def _write_all(world: World) -> tuple[str, str]:
    # The loop's folder starts empty (a cold cache): a tool makes its own folders in it.
    paths = [world.home / rel for rel in WRITES]
    command = " && ".join(f"mkdir -p {p.parent} && echo warm > {p}" for p in paths)
    return _check(world, command)


def test_a_walled_check_writes_its_tools_caches_in_the_loop_s_folder(world: World) -> None:
    status, tail = _write_all(world)
    assert status == "pass", tail
    for rel in WRITES:
        assert not (world.home / rel).exists(), rel  # the real caches are untouched
    landed = sorted(p.relative_to(world.own).as_posix() for p in world.own.rglob("x"))
    assert landed == ["cargo-registry/x", "npm/_logs/x", "xdg-cache/tool/x"]


def test_the_loop_s_next_check_finds_the_cache_warm(world: World) -> None:
    assert _write_all(world)[0] == "pass"
    command = " && ".join(f"cat {world.home}/{rel}" for rel in WRITES)
    status, tail = _check(world, command)
    assert status == "pass" and tail.count("warm") == len(WRITES)


def test_cargo_s_credentials_beside_its_registry_stay_hidden(world: World) -> None:
    status, tail = _check(world, f"cat {world.home}/.cargo/credentials.toml")
    assert status == "fail" and "cio-registry-token-42" not in tail


@pytest.mark.usefixtures("unwalled")
def test_unwalled_the_same_check_reads_cargo_s_credentials(world: World) -> None:
    status, tail = _check(world, f"cat {world.home}/.cargo/credentials.toml")
    assert status == "pass" and "cio-registry-token-42" in tail


def test_a_tool_with_no_cache_yet_is_pointed_at_the_loop_s_folder(world: World) -> None:
    """No `~/.cache` yet (and a read-only home to make it in): XDG_CACHE_HOME names the
    loop's folder, which every tool that follows it writes in."""
    shutil.rmtree(world.home / ".cache")
    command = 'mkdir -p "$XDG_CACHE_HOME/go-build" && echo warm > "$XDG_CACHE_HOME/go-build/x"'
    status, tail = _check(world, command)
    assert status == "pass", tail
    assert (world.own / "xdg-cache" / "go-build" / "x").read_text() == "warm\n"
    assert not (world.home / ".cache").exists()


def test_a_cargo_cache_not_made_yet_is_made_empty_and_bound(world: World) -> None:
    """cargo has no variable for its git cache alone (CARGO_HOME also moves its credentials):
    the empty folder cargo would make is made where it goes, and the loop's bound over it."""
    db = world.home / ".cargo" / "git" / "db"
    status, tail = _check(world, f"mkdir -p {db} && echo warm > {db}/x")
    assert status == "pass", tail
    assert (world.own / "cargo-git" / "db" / "x").read_text() == "warm\n"
    assert list((world.home / ".cargo" / "git").iterdir()) == []


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_a_real_npm_test_logs_in_the_loop_s_folder(world: World) -> None:
    manifest = '{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node -e 0"}}\n'
    (world.repo / "package.json").write_text(manifest)
    status, tail = _check(world, "npm test --loglevel=silly")
    assert status == "pass", tail
    assert list((world.own / "npm" / "_logs").glob("*.log"))
    assert list((world.home / ".npm" / "_logs").iterdir()) == []


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_a_real_cargo_test_fetches_a_git_dependency_into_the_loop_s_folder(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git dependency inside the work tree (no network): cargo clones it into
    `~/.cargo/git`, which was read-only walled."""
    if Path(RUSTUP_HOME).is_dir():  # a rustup install: found from the moved HOME too
        monkeypatch.setenv("RUSTUP_HOME", RUSTUP_HOME)
    dep = world.repo / "dep"
    _cargo_lib(dep, "dep", "")
    git = ["git", "-C", str(dep), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(dep)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "dep"], check=True)
    _cargo_lib(world.repo / "app", "app", f'dep = {{ git = "file://{dep}" }}\n')
    status, tail = _check(world, "cd app && cargo test -q --offline 2>&1 || cargo test -q 2>&1")
    assert status == "pass", tail
    assert list((world.own / "cargo-git").iterdir())
    assert list((world.home / ".cargo" / "git").iterdir()) == []


def _cargo_lib(where: Path, name: str, deps: str) -> None:
    (where / "src").mkdir(parents=True)
    (where / "src" / "lib.rs").write_text("#[test]\nfn it() {}\n")
    manifest = f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'
    (where / "Cargo.toml").write_text(f"{manifest}\n[dependencies]\n{deps}")
