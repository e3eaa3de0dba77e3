"""The wall: what a walled implementer may write, read and reach, whatever its host.

Each host turns a `WallSpec` into its own sandbox settings (`hosts/claude/boundary.py`,
`hosts/codex/boundary.py`, handed out by `Host.boundary()`) and judges its effective settings against the same spec. This module holds
what both share: the spec, the status a check reports, and whether the machine has what a
sandbox needs. Standard library only, no I/O at import.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# Paths under the worktree the implementer must not write: git runs what `.git/config`,
# `.git/hooks` and `.git/info/attributes` name, and the hosts load their settings and hooks
# from the other three.
PROTECTED_IN_WORKTREE: tuple[str, ...] = (
    ".git/config",
    ".git/hooks",
    ".git/info",
    ".claude",
    ".codex",
    ".agents",
)

# Credential files and folders under the user's home that no implementer needs to read.
CREDENTIALS_IN_HOME: tuple[str, ...] = (
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".ssh",
    ".config/gh",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".docker/config.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
)

# Variables taken out of the implementer's shell: the manager's key, the hosts' own keys (its
# shell never needs them) and where the loop keeps its state.
HIDDEN_ENV: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "ANTHROPIC_API_KEY",
    "AUTOPILOT_CODEX_HOME",
)

Level = Literal["on", "off", "partly"]


@dataclass(frozen=True)
class WallSpec:
    """What walls one implementer in. Paths are absolute; `deny_read` and `allow_hosts` are the
    user's additions (extra paths to hide, the only hosts its network may reach)."""

    worktree: Path
    state_home: Path
    home: Path
    deny_read: tuple[Path, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    hidden_env: tuple[str, ...] = HIDDEN_ENV
    # False keeps the whole git directory read-only (a round: the driver commits for it).
    git_writable: bool = True

    def protected_paths(self) -> list[Path]:
        if self.git_writable:
            return [self.worktree / rel for rel in PROTECTED_IN_WORKTREE]
        rest = [rel for rel in PROTECTED_IN_WORKTREE if not rel.startswith(".git/")]
        return [self.worktree / ".git", *(self.worktree / rel for rel in rest)]

    def hidden_paths(self) -> list[Path]:
        """Everything the implementer must not read, the state home first."""
        creds = [self.home / rel for rel in CREDENTIALS_IN_HOME]
        return _unique([self.state_home, *creds, *self.deny_read])


@dataclass(frozen=True)
class WallStatus:
    """`on` (every piece holds), `off` (no sandbox at all) or `partly`, with each missing piece
    said in words a user can act on."""

    level: Level
    missing: tuple[str, ...] = ()

    @classmethod
    def judge(cls, sandboxed: bool, missing: list[str]) -> WallStatus:
        if not sandboxed:
            return cls("off", tuple(missing))
        return cls("partly" if missing else "on", tuple(missing))


@dataclass(frozen=True)
class Prereqs:
    """Whether the machine can run a host's sandbox, and the command line that fixes it."""

    ok: bool
    missing: tuple[str, ...] = ()
    fix: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


# Linux programs Claude Code's sandbox needs; Codex ships its own bubblewrap but uses the
# system one when present.
LINUX_TOOLS: tuple[str, ...] = ("bwrap", "socat")
_PACKAGES = {"bwrap": "bubblewrap", "socat": "socat"}


SANDBOXED_SYSTEMS = ("linux", "darwin")


def sandbox_usable(
    needs_tools: bool, system: str | None = None, which: Callable[[str], str | None] | None = None
) -> tuple[bool, Prereqs]:
    """Can a host's sandbox start here? A host that brings its own sandbox program (Codex)
    needs only a system it covers; the others also need the system's tools."""
    name = (system or platform.system()).lower()
    prereqs = check_wall_prereqs(name, which) if which else check_wall_prereqs(name)
    return (prereqs.ok if needs_tools else name in SANDBOXED_SYSTEMS), prereqs


def check_wall_prereqs(
    system: str | None = None, which: Callable[[str], str | None] = shutil.which
) -> Prereqs:
    """Is what the sandbox needs on this machine? Linux needs `bwrap` and `socat` on PATH;
    macOS uses the system's Seatbelt; other systems have no sandbox the wall can use."""
    name = (system or platform.system()).lower()
    if name == "darwin":
        return Prereqs(ok=True, notes=("macOS: the hosts use the system's Seatbelt sandbox",))
    if name != "linux":
        return Prereqs(
            ok=False,
            missing=(f"a sandbox for {name}",),
            notes=("the hosts' sandboxes cover Linux and macOS only; the loop runs unguarded",),
        )
    absent = [tool for tool in LINUX_TOOLS if which(tool) is None]
    if not absent:
        return Prereqs(ok=True)
    packages = " ".join(_PACKAGES[tool] for tool in absent)
    fix = f"sudo apt-get install -y {packages}"
    if which("apt-get") is None:
        fix = f"install {packages} with your package manager"
    return Prereqs(ok=False, missing=tuple(absent), fix=fix)


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.add(path)
            out.append(path)
    return out


def read_json(path: Path) -> dict[str, Any] | None:
    """A settings file's JSON object; None when it is absent or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_toml(path: Path) -> dict[str, Any] | None:
    """A config file's TOML table; None when absent, unreadable, or on Python 3.10."""
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:  # Python 3.10: the config cannot be judged
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def flag_value(args: Sequence[str], i: int, names: Collection[str]) -> tuple[str, str] | None:
    """(flag, value) when `args[i]` is one of `names`, as `--flag value`, `--flag=value` or a
    short `-cvalue`; the value is "" when the flag takes none or it is missing."""
    arg = args[i]
    for name in names:
        if arg == name:
            return name, args[i + 1] if i + 1 < len(args) else ""
        if name.startswith("--") and arg.startswith(name + "="):
            return name, arg[len(name) + 1 :]
        if len(name) == 2 and arg.startswith(name) and not arg.startswith("--"):
            return name, arg[2:]
    return None
