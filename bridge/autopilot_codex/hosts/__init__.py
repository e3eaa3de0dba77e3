"""The hosts a loop runs in (Claude Code, the Codex CLI): the registry.

A host is one package here, `hosts/<name>/`, that owns it whole behind the `Host` protocol
(`protocol.py`): its hook dialect, the files that hold its hooks, its headless runner for
rounds, its install and trust, its doctor check, the names of our commands in it, and its
sandbox boundary. Adding a host is adding its package and its line in `HOSTS` (mypy checks
the host against `Host`). What a host package imports on the hook path must stay in the
standard library: `hookrun` looks the host up on every admitted hook; the rest (runner,
install, doctor) is imported by the member that needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import Registry

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ..wall import WallSpec

    # Types only: the hook path never pays for the protocol module.
    from .protocol import Host as Host


def _claude() -> Host:
    from .claude import HOST

    return HOST


def _codex() -> Host:
    from .codex import HOST

    return HOST


HOSTS: Registry[Host] = Registry("host", {"claude": _claude, "codex": _codex})


def get(name: str) -> Host:
    return HOSTS.get(name)


def every() -> list[Host]:
    """Every registered host, for a check that must hold whichever host asks."""
    return [HOSTS.get(name) for name in HOSTS]


def label(name: str) -> str:
    """A host as its user knows it ("Claude Code"); the bare name for one not registered here
    (a loop started by a host this install does not know)."""
    return HOSTS.get(name).label if name in HOSTS else name


def run_files() -> tuple[str, ...]:
    """The patterns of every file git or a registered host runs programs from (git's own and
    each host's `run_files`), relative to a worktree."""
    from ..wall import GIT_RUN_FILES

    return tuple(dict.fromkeys([*GIT_RUN_FILES, *(p for h in every() for p in h.run_files)]))


def logins(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Every registered host's login, both where it is by default and where `env` moves it
    (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`)."""
    found = [p for host in every() for p in (*host.logins({}, home), *host.logins(env, home))]
    return list(dict.fromkeys(found))


def credential_stores(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Every credential store the wall hides under `home`: the standard ones (`.ssh`, `.aws`,
    `.git-credentials`, ...) and each host's login. Standard library only, no I/O: the
    supervisor's own sandbox reads this list too."""
    from ..wall import CREDENTIALS_IN_HOME

    return list(dict.fromkeys([*(home / rel for rel in CREDENTIALS_IN_HOME), *logins(home, env)]))


def wall_spec(worktree: Path, state_home: Path, home: Path, env: Mapping[str, str]) -> WallSpec:
    """The bare wall for a worktree, with every registered host's run files and logins."""
    from ..wall import WallSpec

    return WallSpec(
        worktree=worktree,
        state_home=state_home,
        home=home,
        logins=tuple(logins(home, env)),
        run_files=run_files(),
    )
