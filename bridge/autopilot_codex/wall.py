"""The wall: what a walled implementer may write, read and reach, whatever its host.

Each host turns a `WallSpec` into its own sandbox settings (`hosts/claude/boundary.py`,
`hosts/codex/boundary.py`, handed out by `Host.boundary()`) and judges its effective settings against the same spec. This module holds
what both share: the spec, the status a check reports, and whether the machine has what a
sandbox needs. Standard library only, no I/O at import.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import surrogates

# Files git runs programs from, wherever a repository sits in the worktree (a nested clone, a
# submodule's git directory under `.git/modules`): every host's concern, so no host's list.
# Patterns are relative to the worktree; `**` is any number of folders, none included. A `.git`
# file is a link to a git directory elsewhere, whose config git then runs.
GIT_RUN_FILES: tuple[str, ...] = (
    "**/.git/config",
    # A git directory holding `commondir` takes its config and hooks from the folder it names;
    # `config.worktree` is read as config once the config enables it.
    "**/.git/commondir",
    "**/.git/config.worktree",
    "**/.git/hooks/**",
    "**/.git/modules/**/config",
    "**/.git/modules/**/hooks/**",
    "**/.git",
    "**/.gitmodules",
)

# Run files a sandbox must not list while they are absent: a sandbox that keeps a missing path
# from being made puts an unreadable entry there, and git fails on an unreadable `commondir`
# ("failed to read .git/commondir"), every git command of the implementer's with it. Absent,
# such a file is left to the rails and the comparison at each session and round start.
ONLY_WHEN_PRESENT: tuple[str, ...] = (".git/commondir",)

# The top repository's own `info` folder (`attributes` names the filters its config defines):
# kept read-only by the wall, not compared (the user edits `info/exclude` freely).
GIT_INFO = ".git/info"

# Credential stores under the user's home that no implementer needs to read, whichever host
# runs it; each host adds its own login (`Host.logins`), wherever its variables put it.
CREDENTIALS_IN_HOME: tuple[str, ...] = (
    ".git-credentials",
    ".config/git/credentials",
    ".netrc",
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".npmrc",
    ".pypirc",
    ".config/gh",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
)

# Key rings an agent signs or decrypts with: never read by the supervisor's own processes (their
# git signs nothing) and named by the rails, but left readable inside the implementer's wall so
# that its own commits can still be signed.
KEYRINGS: tuple[str, ...] = (".gnupg",)

# Variables taken out of the implementer's shell: the manager's key, the hosts' own keys (its
# shell never needs them) and where the loop keeps its state.
HIDDEN_ENV: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "ANTHROPIC_API_KEY",
    "AUTOPILOT_CODEX_HOME",
)

Level = Literal["on", "off", "partly"]


def literal(pattern: str) -> str:
    """The top instance of a run-file pattern, as a path a sandbox without globs can protect:
    `**/.claude/**` is `.claude`, `**/.git/hooks/**` is `.git/hooks`."""
    parts = pattern.split("/")
    while parts and parts[0] == "**":
        parts.pop(0)
    return "/".join(parts[: parts.index("**")] if "**" in parts else parts)


@dataclass(frozen=True)
class WallSpec:
    """What walls one implementer in. Paths are absolute; `deny_read` and `allow_hosts` are the
    user's additions (extra paths to hide, the only hosts its network may reach); `logins` the
    hosts' logins, `run_files` the patterns (relative to the worktree) of the files git and the
    hosts run programs from: every registered host's, as `hosts.wall_spec` fills them in (this
    module knows no host); `nested_git` the git directories of the repositories nested in the
    worktree when the spec was made."""

    worktree: Path
    state_home: Path
    home: Path
    deny_read: tuple[Path, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    hidden_env: tuple[str, ...] = HIDDEN_ENV
    # False keeps the whole git directory read-only (a round: the driver commits for it).
    git_writable: bool = True
    logins: tuple[Path, ...] = ()
    run_files: tuple[str, ...] = GIT_RUN_FILES
    nested_git: tuple[Path, ...] = ()

    def protected_paths(self) -> list[Path]:
        """The run files as paths, for a sandbox that takes no globs: each pattern's top
        instance, the top repository's `info`, and each nested repository's config and hooks.
        A `.git` link file is left to the comparison: the folder of the same name is written by
        every commit."""
        tops = [
            rel
            for rel in map(literal, self.run_files)
            if rel != ".git"
            and (rel not in ONLY_WHEN_PRESENT or os.path.lexists(self.worktree / rel))
        ]
        nested = [d / leaf for d in self.nested_git for leaf in ("config", "hooks")]
        if self.git_writable:
            rels = [*tops, GIT_INFO]
            return list(dict.fromkeys([*(self.worktree / rel for rel in rels), *nested]))
        rest = [rel for rel in tops if not rel.startswith(".git/")]
        top = [self.worktree / ".git", *(self.worktree / rel for rel in rest)]
        return list(dict.fromkeys([*top, *nested]))

    def protected_folders(self) -> list[Path]:
        """The protected paths that are folders (a pattern that goes on below its top)."""
        tops = {literal(p) for p in self.run_files if literal(p) != p.lstrip("*/")}
        folders = [self.worktree / rel for rel in (*tops, GIT_INFO)]
        folders += [d / "hooks" for d in self.nested_git]
        return [p for p in self.protected_paths() if p in folders or p == self.worktree / ".git"]

    def protected_globs(self) -> list[str]:
        """The run files as absolute patterns, for a host whose rules take globs."""
        return [f"{self.worktree.as_posix()}/{pattern}" for pattern in self.run_files]

    def hidden_paths(self) -> list[Path]:
        """Everything the implementer must not read, the state home first."""
        creds = [self.home / rel for rel in CREDENTIALS_IN_HOME]
        return list(dict.fromkeys([self.state_home, *creds, *self.logins, *self.deny_read]))


@dataclass(frozen=True)
class WallStatus:
    """`on` (every piece holds), `off` (no sandbox at all) or `partly`, with each missing piece
    said in words a user can act on."""

    level: Level
    missing: tuple[str, ...] = ()

    @classmethod
    def judge(cls, sandboxed: bool, missing: list[str]) -> WallStatus:
        level: Level = ("partly" if missing else "on") if sandboxed else "off"
        return cls(level, tuple(missing))


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


def _system() -> str:
    """The system's name (`platform.system`), imported only where the wall is checked:
    `platform` is not for every hook to load (issue 35)."""
    import platform

    return platform.system()


def sandbox_usable(
    needs_tools: bool, system: str | None = None, which: Callable[[str], str | None] | None = None
) -> tuple[bool, Prereqs]:
    """Can a host's sandbox start here? A host that brings its own sandbox program (Codex)
    needs only a system it covers; the others also need the system's tools."""
    name = (system or _system()).lower()
    prereqs = check_wall_prereqs(name, which) if which else check_wall_prereqs(name)
    return (prereqs.ok if needs_tools else name in SANDBOXED_SYSTEMS), prereqs


def check_wall_prereqs(
    system: str | None = None, which: Callable[[str], str | None] | None = None
) -> Prereqs:
    """Is what the sandbox needs on this machine? Linux needs `bwrap` and `socat` on PATH
    (`which` defaults to `shutil.which`); macOS uses the system's Seatbelt; other systems have
    no sandbox the wall can use."""
    name = (system or _system()).lower()
    if which is None:
        import shutil  # here, not at the top: a hook that reaches this module never asks

        which = shutil.which
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


def config_folder(env: Mapping[str, str], home: Path, variable: str, default: str) -> Path:
    configured = env.get(variable, "").strip()
    return Path(configured).expanduser() if configured else home / default


def read_layers(
    paths: Mapping[str, Path | None], read: Callable[[Path], dict[str, Any] | None]
) -> dict[str, dict[str, Any]]:
    """A host's settings layers by name, each file that `read` finds an object in."""
    docs = {name: read(path) if path is not None else None for name, path in paths.items()}
    return {name: doc for name, doc in docs.items() if doc is not None}


def dig(doc: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at `path` in nested tables, or None where one is missing or no table."""
    node: Any = doc
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def first_value(docs: Sequence[tuple[str, Mapping[str, Any]]], path: Sequence[str]) -> Any:
    """The value at `path` in the strongest layer that sets it (`docs` strongest first)."""
    return next((v for _, doc in docs if (v := dig(doc, path)) is not None), None)


def read_json(path: Path) -> dict[str, Any] | None:
    """A settings file's JSON object; None when it is absent or unreadable."""
    try:
        data = surrogates.loads(path.read_text(encoding="utf-8"))
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
