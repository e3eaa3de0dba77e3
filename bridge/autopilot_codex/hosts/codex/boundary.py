"""The Codex CLI's wall: `-c key=value` overrides that sandbox a walled implementer, and a
check of the config a session will actually run with.

Verified on Codex CLI 0.171.0 on Linux (see docs/hosts-sandbox.md): a permission profile
(`default_permissions` plus `[permissions.<name>]`) confines both the shell tool and
`apply_patch`. With the profile below a write outside the worktree and to `.git/config` or
`.git/hooks` fails ("Read-only file system"), a `"none"` path cannot be read ("Permission
denied"), `git commit` works (`.git` itself is writable), and `shell_environment_policy.exclude`
takes variables out of the shell. `-c default_permissions=...` won over a `sandbox_mode` in the
user's config.toml. The legacy `sandbox_mode = "workspace-write"` cannot hide a path from reads
and keeps `.git` read-only.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ... import wall
from ...wall import WallSpec, WallStatus, dig, first_value, flag_value

PROFILE = "autopilot_wall"
SYSTEM_CONFIG = Path("/etc/codex/config.toml")
# Config keys a caller's `-c` must not set on a walled round: they pick or shape the sandbox
# and the shell's environment.
_WALL_KEYS = (
    "default_permissions", "permissions", "sandbox_mode", "sandbox_workspace_write",
    "shell_environment_policy", "profile", "profiles",
)  # fmt: skip
# Flags that replace the boundary's sandbox, widen what it writes, or pick a config profile
# (which may set its own sandbox).
_LOOSENING_FLAGS = (
    "--sandbox", "-s", "--dangerously-bypass-approvals-and-sandbox", "--yolo", "--full-auto",
    "--add-dir", "--profile", "-p",
)  # fmt: skip
_CONFIG_FLAGS = ("--config", "-c")
# The feature that gives `exec_command` a terminal, which `write_stdin` (no hook sees it)
# types into later: off behind the wall, and no caller's flag turns it back on.
_TTY = "unified_exec_tty"
# Config layers, strongest first: `-c` overrides, the project's `.codex/config.toml`, the
# user's `$CODEX_HOME/config.toml`, the system's.
LAYERS: tuple[str, ...] = ("overrides", "project", "user", "system")
_DENIED = frozenset({"none", "deny"})


def toml_string(text: str) -> str:
    """A TOML basic string. JSON's escapes are TOML's, except that TOML also wants DEL
    escaped and takes no surrogate pairs (hence `ensure_ascii=False`)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def filesystem_table(
    spec: WallSpec, exists: Callable[[Path], bool] = Path.exists
) -> dict[str, str]:
    """The profile's filesystem rules: read everything, write the worktree and its `.git`
    (commits), but not the files git or the hosts run, and read none of the hidden paths.

    A hidden path that does not exist is left out: Codex's bubblewrap makes a mount point for
    every rule, and for a missing path that point can show up in the user's worktree. The
    implementer cannot create one either, outside the worktree. The protected folders inside
    the worktree are kept whether they exist or not; `prepare_worktree` creates them first."""
    git = "write" if spec.git_writable else "read"
    table = {":root": "read", str(spec.worktree): "write", str(spec.worktree / ".git"): git}
    table.update({str(p): "read" for p in _protectable(spec, exists)})
    table.update({str(p): "none" for p in spec.hidden_paths() if exists(p)})
    return table


def _protectable(spec: WallSpec, exists: Callable[[Path], bool]) -> list[Path]:
    """The protected paths a rule can hold: the folders (`prepare_worktree` makes the missing
    ones) and the files that exist. A rule for a missing file leaves an empty placeholder of
    that name in the worktree (an empty `.mcp.json` or `.gitmodules`), so a file the
    implementer could still create is left to the comparison at each start (`hostfiles`)."""
    folders = spec.protected_folders()
    return [p for p in spec.protected_paths() if p in folders or exists(p)]


def prepare_worktree(spec: WallSpec) -> None:
    """Create the protected folders that are missing (empty folders: git does not see them),
    so that Codex mounts them read-only instead of leaving a placeholder file behind. A linked
    worktree's `.git` (a lane's) is a file naming git directories outside the worktree, which
    the profile leaves read-only: nothing is made at or under it."""
    link = spec.worktree / ".git"
    linked = link.is_file()
    for path in spec.protected_folders():
        if not (linked and (path == link or link in path.parents)):
            path.mkdir(parents=True, exist_ok=True)


def boundary_config(spec: WallSpec, exists: Callable[[Path], bool] = Path.exists) -> dict[str, Any]:
    """The same boundary as `boundary_overrides`, as the config layer it makes."""
    return {
        "default_permissions": PROFILE,
        "permissions": {
            PROFILE: {"filesystem": filesystem_table(spec, exists), "network": {"enabled": False}}
        },
        "shell_environment_policy": {"exclude": list(spec.hidden_env)},
        "features": {_TTY: False},
    }


def boundary_overrides(spec: WallSpec, exists: Callable[[Path], bool] = Path.exists) -> list[str]:
    """`codex -c` values (one `key=value` each) that wall the implementer in. The network is
    off: a per-host allowlist for Codex is not verified yet, so `allow_hosts` opens nothing."""
    table = filesystem_table(spec, exists)
    fs = ", ".join(f"{toml_string(k)} = {toml_string(v)}" for k, v in table.items())
    exclude = ", ".join(toml_string(name) for name in spec.hidden_env)
    return [
        f"default_permissions={toml_string(PROFILE)}",
        f"permissions.{PROFILE}.filesystem={{{fs}}}",
        f"permissions.{PROFILE}.network.enabled=false",
        f"shell_environment_policy.exclude=[{exclude}]",
        # No terminal for `exec_command`: `write_stdin` types into one unseen by any hook.
        f"features.{_TTY}=false",
    ]


Docs = list[tuple[str, Mapping[str, Any]]]


def _ordered(layers: Mapping[str, Mapping[str, Any]]) -> Docs:
    """The layers strongest first, with the config profile they select (`profile = "x"`
    picks `[profiles.x]`) just below the `-c` overrides: it beats the files' own values."""
    docs = [(name, layers[name]) for name in LAYERS if isinstance(layers.get(name), Mapping)]
    chosen = first_value(docs, ("profile",))
    if not isinstance(chosen, str):
        return docs
    table = first_value(docs, ("profiles", chosen))
    if not isinstance(table, Mapping):
        return docs
    at = 1 if docs and docs[0][0] == "overrides" else 0
    return [*docs[:at], (f"profile {chosen}", table), *docs[at:]]


def effective_status(
    spec: WallSpec,
    layers: Mapping[str, Mapping[str, Any]],
    exists: Callable[[Path], bool] = Path.exists,
) -> WallStatus:
    """How walled an implementer is under these config layers (parsed TOML by layer name:
    `overrides` for `-c`, `project`, `user`, `system`), with each missing piece in words.
    Command-line flags such as `--sandbox` or `--dangerously-bypass-approvals-and-sandbox` are
    not config: the caller must not pass them."""
    docs = _ordered(layers)
    # The strongest layer that picks a sandbox decides between a profile and a legacy mode.
    chooser = next((d for _, d in docs if "default_permissions" in d or "sandbox_mode" in d), None)
    if chooser is not None and "default_permissions" in chooser:
        enabled, missing = _profile_missing(spec, docs, str(chooser["default_permissions"]), exists)
    else:
        mode = None if chooser is None else chooser.get("sandbox_mode")
        enabled, missing = _legacy_missing(docs, mode)
    missing += _env_missing(spec, docs)
    if first_value(docs, ("features", _TTY)) is not False:
        # `write_stdin` types into a command's terminal, and no hook sees what it types.
        missing.append(f"features.{_TTY} is not false: a command keeps a terminal to type into")
    return WallStatus.judge(enabled, missing)


def _legacy_missing(docs: Docs, mode: Any) -> tuple[bool, list[str]]:
    if mode == "danger-full-access":
        return False, ["sandbox_mode is danger-full-access: commands run unsandboxed"]
    if mode not in ("workspace-write", "read-only"):
        return False, ["no sandbox chosen (default_permissions or sandbox_mode)"]
    missing = [
        f"sandbox_mode {mode} cannot hide the state home or credentials from reads "
        f"(use the {PROFILE} permission profile)"
    ]
    if mode == "workspace-write":
        if first_value(docs, ("sandbox_workspace_write", "network_access")) is True:
            missing.append("sandbox_workspace_write.network_access is true: the network is open")
        if roots := first_value(docs, ("sandbox_workspace_write", "writable_roots")):
            missing.append(f"sandbox_workspace_write.writable_roots adds writable paths: {roots}")
    return True, missing


def _profile_missing(
    spec: WallSpec, docs: Docs, name: str, exists: Callable[[Path], bool]
) -> tuple[bool, list[str]]:
    if name == ":danger-full-access":
        return False, ["default_permissions is :danger-full-access: commands run unsandboxed"]
    profile = next(
        (p for _, d in docs if isinstance(p := dig(d, ("permissions", name)), Mapping)), None
    )
    if profile is None:
        return True, [f"permission profile {name} hides nothing from reads"]
    fs = profile.get("filesystem")
    rules = (
        {Path(k): v for k, v in fs.items() if not k.startswith(":")}
        if isinstance(fs, Mapping)
        else {}
    )
    specials = {k: v for k, v in fs.items() if k.startswith(":")} if isinstance(fs, Mapping) else {}
    missing = []
    # A missing path outside the worktree cannot be read, nor created by the implementer.
    for target in (p for p in spec.hidden_paths() if exists(p)):
        if _access(target, rules) not in _DENIED:
            missing.append(f'the implementer may read {target} (set it to "none")')
    for target in _protectable(spec, exists):
        if _access(target, rules) == "write":
            missing.append(f'the implementer may write {target} (set it to "read")')
    wider = [
        str(p) for p, v in rules.items() if v == "write" and not p.is_relative_to(spec.worktree)
    ]
    wider += [k for k, v in specials.items() if v == "write"]
    if wider:
        missing.append(f"the profile makes paths outside the worktree writable: {wider}")
    if dig(profile, ("network", "enabled")) is True:
        missing.append(f"permissions.{name}.network.enabled is true: the network is open")
    return True, missing


def _access(target: Path, rules: Mapping[Path, Any]) -> Any:
    # The most specific rule that covers the target decides.
    covering = [p for p in rules if target.is_relative_to(p)]
    return rules[max(covering, key=lambda p: len(p.parts))] if covering else None


# What `inherit = "core"` keeps: none of the names the wall hides.
_CORE_ENV = frozenset(
    {"HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP"}
)


def _matches(name: str, patterns: Sequence[str]) -> bool:
    # Codex's patterns are globs, matched without regard to case.
    return any(fnmatch.fnmatchcase(name.upper(), p.upper()) for p in patterns)


def _env_missing(spec: WallSpec, docs: Docs) -> list[str]:
    policy = {
        k: first_value(docs, ("shell_environment_policy", k))
        for k in ("inherit", "exclude", "set", "include_only")
    }
    patterns = [str(p) for p in policy["exclude"] or []]
    only = [str(p) for p in policy["include_only"] or []]
    forced = policy["set"] if isinstance(policy["set"], Mapping) else {}
    missing = []
    for name in spec.hidden_env:
        if name in forced:
            missing.append(f"shell_environment_policy.set puts ${name} in the shell")
            continue
        inherited = policy["inherit"] != "none" and (
            policy["inherit"] != "core" or name in _CORE_ENV
        )
        gone = (
            not inherited or _matches(name, patterns) or (bool(only) and not _matches(name, only))
        )
        if not gone:
            missing.append(
                f"the shell inherits ${name} (add it to shell_environment_policy.exclude)"
            )
    return missing


def codex_home(env: Mapping[str, str], home: Path) -> Path:
    return wall.config_folder(env, home, "CODEX_HOME", ".codex")


class CodexBoundary:
    """Codex's boundary: the `autopilot_wall` permission profile and the shell's environment
    policy, as `-c` overrides for a round and as `config.toml` lines for a session."""

    flag_layer = "overrides"
    needs_tools = False
    # Its profile names one writable repository, and `$CODEX_HOME/config.toml` applies to every
    # Codex session: written there, it would keep every other repository read-only.
    writes_user_wall = False

    def user_wall(self, spec: WallSpec, named: bool, env: Mapping[str, str]) -> list[str]:
        config = codex_home(env, spec.home) / "config.toml"
        return [
            f"For Codex, put these lines at the top of {config} (before any [table]); they were "
            "not written:",
            *(key.replace("=", " = ", 1) for key in boundary_overrides(spec)),
            "",
            f"(They name this worktree, {spec.worktree}: run this again in another repository "
            "for its own. Where the file already has a [permissions...], [features] or "
            "[shell_environment_policy] table, put the matching key in that table instead: TOML "
            "refuses a table defined twice.)",
        ]

    def unwall(self) -> list[str]:
        return []  # `user_wall` wrote nothing to take back

    def layers(
        self, worktree: Path, home: Path, env: Mapping[str, str], system: str
    ) -> dict[str, dict[str, Any]]:
        paths = {
            "project": worktree / ".codex" / "config.toml",
            "user": codex_home(env, home) / "config.toml",
            "system": SYSTEM_CONFIG,
        }
        return wall.read_layers(paths, wall.read_toml)

    def judge(self, spec: WallSpec, layers: Mapping[str, Mapping[str, Any]]) -> WallStatus:
        return effective_status(spec, layers)

    def fixes(
        self, status: WallStatus, home: Path, env: Mapping[str, str], system: str
    ) -> list[str]:
        if status.level == "on":
            return []
        config = codex_home(env, home) / "config.toml"
        return [f"`autopilot-codex doctor --wall` prints the lines to put at the top of {config}"]

    def round_layer(self, spec: WallSpec) -> dict[str, Any]:
        return boundary_config(spec)

    def round_args(self, spec: WallSpec, scratch: Path) -> list[str]:
        return [arg for item in boundary_overrides(spec) for arg in ("-c", item)]

    def loosening(self, args: Sequence[str]) -> list[str]:
        found = []
        for i, arg in enumerate(args):
            if flag_value(args, i, _LOOSENING_FLAGS):
                found.append(arg)
            config = flag_value(args, i, _CONFIG_FLAGS)
            key = config[1].split("=", 1)[0].strip() if config else ""
            if key.split(".", 1)[0] in _WALL_KEYS or key == f"features.{_TTY}":
                found.append(f"-c {config[1] if config else key}")
            if flag_value(args, i, ("--enable",)) == ("--enable", _TTY):
                found.append(f"--enable {_TTY}")
        return found

    def prepare(self, spec: WallSpec) -> None:
        prepare_worktree(spec)


BOUNDARY = CodexBoundary()
