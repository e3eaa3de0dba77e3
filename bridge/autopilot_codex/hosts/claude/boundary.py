"""Claude Code's wall: the settings that sandbox a walled implementer, and a check of the
settings a session will actually run with.

`BOUNDARY` is what `Host.boundary()` hands out. Verified on Claude Code 2.1.332 with bubblewrap and socat (see docs/hosts-sandbox.md):

- The Bash tool (and a slash command's `!` block) runs in bubblewrap: writes outside the
  working directory and to `filesystem.denyWrite` fail ("Read-only file system"),
  `filesystem.denyRead` paths read as missing, `credentials.envVars` with mode `deny` unsets a
  variable, and the network goes through a proxy that, with `strictAllowlist`, refuses every
  host not in `allowedDomains`.
- The Write/Edit tools are not sandboxed: `permissions.blockWritesOutsideWorkingDirectories`
  and `Edit(...)` deny rules hold them; `Read(...)` deny rules hold the Read tool.
- Hooks run outside the sandbox (the bridge keeps its state and key).
- Only when `--settings` (or managed settings) set `allowUnsandboxedCommands: false` do the
  CLI's "strict" rules apply: project and local settings (`.claude/settings*.json`) can then
  no longer switch the sandbox off, exempt commands or widen writes. From the user's settings
  alone, a project file with `"sandbox": {"enabled": false}` turns it off.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ... import wall
from ...fileio import atomic_write
from ...wall import WallSpec, WallStatus, dig, first_value, flag_value

# Where each system keeps Claude Code's managed (policy) settings: the one layer besides
# `--settings` that makes its sandbox strict.
MANAGED = {
    "linux": Path("/etc/claude-code/managed-settings.json"),
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
}
NOT_STRICT = "not strict"
FIX_WALL = "autopilot-codex install --wall"
# A round's flags that would replace the boundary (one `--settings` wins over another) or
# widen what its tools may write.
LOOSENING = ("--settings", "--add-dir")
SETTINGS_FILE = "claude-settings.json"

# Settings layers, strongest first (the CLI's own order for a single value).
LAYERS: tuple[str, ...] = ("managed", "flag", "local", "project", "user")
# Layers a strict sandbox still listens to: the repository's own files are left out.
TRUSTED: frozenset[str] = frozenset({"managed", "flag", "user"})
STRICT_SOURCES: frozenset[str] = frozenset({"managed", "flag"})
# The repository's own layers: what a non-strict boundary cannot hold against.
REPOSITORY: frozenset[str] = frozenset({"local", "project"})

_BLOCK_WRITES = ("permissions", "blockWritesOutsideWorkingDirectories")

# Settings that each loosen the sandbox when true.
_WEAKENERS: tuple[tuple[str, ...], ...] = (
    ("enableWeakerNestedSandbox",),
    ("allowNestedUserNamespaces",),
    ("filesystem", "disabled"),
    ("network", "allowAllUnixSockets"),
)


def _rule_path(path: Path) -> str:
    # Permission rules spell an absolute path with a leading `//`.
    return "/" + path.as_posix()


def boundary_settings(spec: WallSpec) -> dict[str, Any]:
    """A settings document for `claude --settings` that walls the implementer in."""
    protected = spec.protected_paths()
    hidden = spec.hidden_paths()
    deny_rules = [f"Edit({_rule_path(p)})" for p in protected]
    deny_rules += [f"Edit({_rule_path(p)}/**)" for p in protected]
    # Permission rules take globs: a run file at any depth, also one created later (a nested
    # repository's `.git/config`), is out of the file tools' reach. The sandbox takes literal
    # paths only on Linux: for Bash, `protected` and the comparison at each start hold instead.
    deny_rules += [f"Edit(/{pattern})" for pattern in spec.protected_globs()]
    deny_rules += [f"Read({_rule_path(p)})" for p in hidden]
    deny_rules += [f"Read({_rule_path(p)}/**)" for p in hidden]
    return {
        "permissions": {
            # The file tools are not sandboxed: this keeps Write/Edit inside the worktree and
            # off every Claude Code settings file, in every permission mode.
            "blockWritesOutsideWorkingDirectories": True,
            "deny": deny_rules,
        },
        "sandbox": {
            "enabled": True,
            "failIfUnavailable": True,
            "autoAllowBashIfSandboxed": True,
            # Also what makes the CLI ignore a repository's attempts to loosen the sandbox.
            "allowUnsandboxedCommands": False,
            "excludedCommands": [],
            "filesystem": {
                "allowWrite": [],
                "denyWrite": [str(p) for p in protected],
                "denyRead": [str(p) for p in hidden],
            },
            "credentials": {"envVars": [{"name": n, "mode": "deny"} for n in spec.hidden_env]},
            "network": {"allowedDomains": list(spec.allow_hosts), "strictAllowlist": True},
        },
    }


def _list(doc: Mapping[str, Any], path: Sequence[str]) -> list[Any]:
    value = dig(doc, path)
    return list(value) if isinstance(value, list) else []


def _ordered(layers: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(name, layers[name]) for name in LAYERS if isinstance(layers.get(name), Mapping)]


def is_strict(layers: Mapping[str, Mapping[str, Any]]) -> bool:
    """Do managed or `--settings` settings hold `allowUnsandboxedCommands: false`?"""
    return any(
        dig(doc, ("sandbox", "allowUnsandboxedCommands")) is False
        for name, doc in _ordered(layers)
        if name in STRICT_SOURCES
    )


def _covered(target: Path, entries: Iterable[Path]) -> bool:
    return any(target == e or e in target.parents for e in entries)


def _paths(raw: Iterable[Any], home: Path) -> list[Path]:
    out = []
    for item in raw:
        if not isinstance(item, str) or not item:
            continue
        text = item.removesuffix("/**").rstrip("/") or "/"
        if text.startswith("~/"):
            out.append(home / text[2:])
        elif text.startswith("//"):
            out.append(Path(text[1:]))
        elif text.startswith("/"):
            out.append(Path(text))
    return out


def _rule_paths(rules: Iterable[Any], tool: str, home: Path) -> list[Path]:
    inner = [
        r[len(tool) + 1 : -1]
        for r in rules
        if isinstance(r, str) and r.startswith(f"{tool}(") and r.endswith(")")
    ]
    return [p for p in _paths(inner, home) if str(p).startswith("/")]


def effective_status(spec: WallSpec, layers: Mapping[str, Mapping[str, Any]]) -> WallStatus:
    """How walled an implementer is under these settings layers (`managed`, `flag` for
    `--settings`, `local`, `project`, `user`; absent ones are left out), with each missing
    piece in words."""
    docs = _ordered(layers)
    strict = is_strict(layers)
    # Under strict rules the repository's layers can only add denies; otherwise they count.
    loose = [(n, d) for n, d in docs if n in TRUSTED] if strict else docs
    enabled = first_value(loose, ("sandbox", "enabled")) is True
    missing = [] if enabled else ["sandbox.enabled is not true: Bash runs unsandboxed"]
    # Not strict matters where the repository has a settings file of its own: it can loosen
    # the boundary now, or after a pull. Without one, a file that appears later would have to
    # come from outside the wall (the boundary keeps `.claude` unwritable inside it, which
    # `_paths_missing` checks), and the layers judged here are the session's.
    if not strict and any(name in REPOSITORY for name, _ in docs):
        missing.append(
            "not strict: the boundary is not in --settings or managed settings with "
            "allowUnsandboxedCommands false, so a project's .claude/settings.json can loosen it"
        )
    missing += _switches_missing(loose, docs)
    missing += _paths_missing(spec, docs)
    missing += _env_missing(spec, docs)
    missing += _network_missing(spec, loose)
    return WallStatus.judge(enabled, missing)


Docs = list[tuple[str, Mapping[str, Any]]]


def _switches_missing(loose: Docs, docs: Docs) -> list[str]:
    missing = []
    if first_value(loose, ("sandbox", "failIfUnavailable")) is not True:
        missing.append("sandbox.failIfUnavailable is not true: a missing sandbox runs unsandboxed")
    if first_value(loose, ("sandbox", "allowUnsandboxedCommands")) is not False:
        missing.append(
            "sandbox.allowUnsandboxedCommands is not false: dangerouslyDisableSandbox works"
        )
    excluded = [e for _, d in loose for e in _list(d, ("sandbox", "excludedCommands"))]
    if excluded:
        missing.append(f"sandbox.excludedCommands runs commands unsandboxed: {excluded}")
    for path in _WEAKENERS:
        if first_value(loose, ("sandbox", *path)) is True:
            missing.append(f"sandbox.{'.'.join(path)} is true: it weakens the sandbox")
    # The CLI takes a true from any settings source for this one.
    if not any(dig(d, _BLOCK_WRITES) is True for _, d in docs):
        missing.append(
            "permissions.blockWritesOutsideWorkingDirectories is not true: "
            "Write/Edit reach outside the worktree"
        )
    return missing


def _merged(docs: Docs, path: Sequence[str], home: Path) -> list[Path]:
    return _paths((e for _, d in docs for e in _list(d, path)), home)


def _paths_missing(spec: WallSpec, docs: Docs) -> list[str]:
    rules = [r for _, d in docs for r in _list(d, ("permissions", "deny"))]
    edit_denied = _rule_paths(rules, "Edit", spec.home)
    read_denied = _rule_paths(rules, "Read", spec.home)
    # The sandbox merges Edit(...) and Read(...) deny rules into its own lists.
    deny_write = _merged(docs, ("sandbox", "filesystem", "denyWrite"), spec.home) + edit_denied
    deny_read = _merged(docs, ("sandbox", "filesystem", "denyRead"), spec.home) + read_denied
    missing = []
    for target in spec.protected_paths():
        if not _covered(target, deny_write):
            missing.append(f"Bash may write {target} (add it to sandbox.filesystem.denyWrite)")
        if not _covered(target, edit_denied):
            missing.append(f"Write/Edit may change {target} (add an Edit(/{target}) deny rule)")
    for target in spec.hidden_paths():
        if not _covered(target, deny_read):
            missing.append(f"Bash may read {target} (add it to sandbox.filesystem.denyRead)")
        if not _covered(target, read_denied):
            missing.append(f"the Read tool may read {target} (add a Read(/{target}/**) deny rule)")
    return missing


def _env_missing(spec: WallSpec, docs: Docs) -> list[str]:
    denied = {
        e.get("name")
        for _, d in docs
        for e in _list(d, ("sandbox", "credentials", "envVars"))
        if isinstance(e, Mapping) and e.get("mode") == "deny"
    }
    return [
        f"Bash can read ${name} (add it to sandbox.credentials.envVars with mode deny)"
        for name in spec.hidden_env
        if name not in denied
    ]


def _network_missing(spec: WallSpec, loose: Docs) -> list[str]:
    missing = []
    if first_value(loose, ("sandbox", "network", "strictAllowlist")) is not True:
        missing.append(
            "sandbox.network.strictAllowlist is not true: hosts off the list are not refused"
        )
    allowed = {h for _, d in loose for h in _list(d, ("sandbox", "network", "allowedDomains"))}
    if extra := sorted(str(h) for h in allowed - set(spec.allow_hosts)):
        missing.append(f"the network reaches hosts off the allowlist: {extra}")
    return missing


def claude_dir(env: Mapping[str, str], home: Path) -> Path:
    return wall.config_folder(env, home, "CLAUDE_CONFIG_DIR", ".claude")


class ClaudeBoundary:
    """Claude Code's boundary: `--settings <file>` for a round (strict: no repository file can
    loosen it), the user's settings for a session (not strict: `plan` says so)."""

    flag_layer = "flag"
    needs_tools = True
    writes_user_wall = True

    def user_wall(self, spec: WallSpec, named: bool, env: Mapping[str, str]) -> list[str]:
        from .userwall import lines, without

        settings = boundary_settings(spec)
        boundary = settings if named else without(settings, str(spec.worktree))
        target = claude_dir(env, spec.home) / "settings.json"
        return lines(boundary, target, spec.worktree if named else None)

    def unwall(self) -> list[str]:
        from .userwall import unwall

        return unwall()

    def layers(
        self, worktree: Path, home: Path, env: Mapping[str, str], system: str
    ) -> dict[str, dict[str, Any]]:
        paths = {
            "managed": MANAGED.get(system),
            "local": worktree / ".claude" / "settings.local.json",
            "project": worktree / ".claude" / "settings.json",
            "user": claude_dir(env, home) / "settings.json",
        }
        return wall.read_layers(paths, wall.read_json)

    def judge(self, spec: WallSpec, layers: Mapping[str, Mapping[str, Any]]) -> WallStatus:
        return effective_status(spec, layers)

    def fixes(
        self, status: WallStatus, home: Path, env: Mapping[str, str], system: str
    ) -> list[str]:
        fixes = []
        if any(not m.startswith(NOT_STRICT) for m in status.missing):
            fixes.append(
                f"`{FIX_WALL}` writes the boundary into ~/.claude/settings.json (a backup is kept)"
            )
        if any(m.startswith(NOT_STRICT) for m in status.missing):
            managed = MANAGED.get(system, "managed settings")
            fixes.append(
                f"for a wall no repository can loosen, put the same `sandbox` and `permissions` "
                f"into {managed} (as an administrator), or run the loop in rounds "
                "(`autopilot-codex run`, which passes the boundary to each round)"
            )
        return fixes

    def round_layer(self, spec: WallSpec) -> dict[str, Any]:
        return boundary_settings(spec)

    def round_args(self, spec: WallSpec, scratch: Path) -> list[str]:
        # A file, not inline JSON: the command line stays short and shows no paths to hide.
        target = scratch / SETTINGS_FILE
        atomic_write(target, json.dumps(self.round_layer(spec), indent=2) + "\n")
        return ["--settings", str(target)]

    def loosening(self, args: Sequence[str]) -> list[str]:
        return [args[i] for i in range(len(args)) if flag_value(args, i, LOOSENING)]

    def prepare(self, spec: WallSpec) -> None:
        return None


BOUNDARY = ClaudeBoundary()
