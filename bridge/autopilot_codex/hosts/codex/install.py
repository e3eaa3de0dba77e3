"""`install codex` / `uninstall codex`: the loop's hooks and skills for the Codex CLI.

Codex reads user hooks from ``$CODEX_HOME/hooks.json`` and project hooks from
``<repo>/.codex/hooks.json``, and runs them only when ``$CODEX_HOME/config.toml`` trusts
them (``trust``). Install merges our groups into the hooks file (the user's own hooks
stay), copies the skills where Codex looks for them, writes the trust entries, and records
all of it in a small manifest next to the hooks file, so uninstall removes exactly that.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import BridgeError
from ...fileio import atomic_write
from . import trust as codex_trust
from .boundary import codex_home as codex_folder
from .boundary import toml_string
from .install_record import SKILL_PREFIX, believed

PLUGIN_ROOT = Path(__file__).resolve().parents[4]
HOOKS_TEMPLATE = Path("hooks") / "codex.json"
ROOT_PLACEHOLDER = "${PLUGIN_ROOT}"
MANIFEST_NAME = "autopilot-codex-install.json"


@dataclass(frozen=True)
class Target:
    """Where one install puts its files. Trust always lives in the user's config.toml."""

    scope: str  # "user" | "project"
    hooks_file: Path
    skills_dir: Path
    config_file: Path
    repo: Path | None = None

    @property
    def manifest(self) -> Path:
        return self.hooks_file.with_name(MANIFEST_NAME)


def codex_home(env: Mapping[str, str]) -> Path:
    # Codex names hooks files by their resolved path in trust keys (a symlinked CODEX_HOME too).
    return codex_folder(env, Path.home()).resolve()


def project_root(cwd: Path) -> Path:
    """The repository holding ``cwd`` (a ``.git`` directory or file marks it)."""
    here = cwd.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    raise BridgeError(f"{here} is not inside a git repository; install with --user instead")


def target(scope: str, *, env: Mapping[str, str], cwd: Path) -> Target:
    home = codex_home(env)
    config = home / "config.toml"
    if scope == "user":
        return Target("user", home / "hooks.json", home / "skills", config)
    repo = project_root(cwd)
    for place in (repo / ".codex", repo / ".agents", repo / ".agents" / "skills"):
        # A link planted there would have the install write, and uninstall remove, elsewhere.
        if place.is_symlink() or not place.resolve().is_relative_to(repo):
            raise BridgeError(f"{place} is a link out of the repository: nothing was written")
    return Target(
        "project", repo / ".codex" / "hooks.json", repo / ".agents" / "skills", config, repo
    )


# -- the hooks document ------------------------------------------------------------------------


def _double_quoted(text: str) -> str:
    """``text`` safe inside a shell double-quoted string."""
    for ch in ("\\", '"', "$", "`"):
        text = text.replace(ch, "\\" + ch)
    return text


def our_hooks(plugin_root: Path = PLUGIN_ROOT) -> dict[str, list[dict[str, Any]]]:
    """``hooks/codex.json``'s groups with the plugin root filled in (user and project hooks
    get no ``PLUGIN_ROOT`` variable)."""
    document = json.loads((plugin_root / HOOKS_TEMPLATE).read_text(encoding="utf-8"))
    root = _double_quoted(str(plugin_root))
    for groups in document["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = handler["command"].replace(ROOT_PLACEHOLDER, root)
    hooks: dict[str, list[dict[str, Any]]] = document["hooks"]
    return hooks


def read_hooks_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"hooks": {}}
    try:
        document = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise BridgeError(f"{path} is not valid JSON ({exc}); fix or move it first") from None
    if not isinstance(document, dict) or not isinstance(document.get("hooks", {}), dict):
        raise BridgeError(f'{path} is not a Codex hooks file (no "hooks" object)')
    document.setdefault("hooks", {})
    return document


# Our handler's command, from any copy of the plugin: `/bin/sh "<root>/bin/autopilot-codex" hook
# <Event> --host codex`, or `bash "..."` as older versions wrote it (found on PATH, where a
# folder the implementer writes may come first). The launcher path is group 1.
OUR_COMMAND = re.compile(r'^(?:/bin/sh|bash) "(.*/bin/autopilot-codex)" hook \S+ --host codex$')


def launcher_of(group: Any) -> str | None:
    """The launcher every handler of ``group`` runs, when the group is ours; else None."""
    handlers = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(handlers, list) or not handlers:
        return None
    launchers = set()
    for handler in handlers:
        command = handler.get("command") if isinstance(handler, dict) else None
        found = OUR_COMMAND.match(command) if isinstance(command, str) else None
        if found is None:
            return None
        # Undo _double_quoted: the path as the shell will see it.
        launchers.add(re.sub(r"\\(.)", r"\1", found.group(1)))
    return launchers.pop() if len(launchers) == 1 else None


def without_ours(document: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """``document`` without any group of ours (from this or another copy of the plugin, left
    by a lost manifest or a moved checkout), and how many were removed."""
    cleaned: dict[str, Any] = json.loads(json.dumps(document))
    removed = 0
    hooks = cleaned.get("hooks", {})
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = [g for g in groups if launcher_of(g) is None]
        removed += len(groups) - len(kept)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return cleaned, removed


def merge_hooks(
    document: Mapping[str, Any], ours: Mapping[str, list[dict[str, Any]]]
) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """``document`` with our groups appended after the user's, and where each one landed
    (event, group index): the trust keys name those positions."""
    merged: dict[str, Any] = json.loads(json.dumps(document))
    hooks = merged.setdefault("hooks", {})
    placed: list[tuple[str, int]] = []
    for event, groups in ours.items():
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise BridgeError(f"hooks.{event} in the hooks file is not a list; fix it first")
        for group in groups:
            existing.append(group)
            placed.append((event, len(existing) - 1))
    return merged, placed


def unmerge_hooks(
    document: Mapping[str, Any], groups: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """``document`` without our recorded groups (matched by content, wherever they are now)."""
    remaining: dict[str, Any] = json.loads(json.dumps(document))
    hooks = remaining.get("hooks", {})
    for entry in groups:
        event, group = entry["event"], entry["group"]
        existing = hooks.get(event)
        if isinstance(existing, list) and group in existing:
            existing.remove(group)
            if not existing:
                del hooks[event]
    return remaining


def _write_json(path: Path, document: Mapping[str, Any]) -> None:
    atomic_write(path, json.dumps(document, indent=2) + "\n", keep_mode=True)


# -- install / uninstall -----------------------------------------------------------------------


def install(tgt: Target, plugin_root: Path = PLUGIN_ROOT) -> list[str]:
    """Install (or reinstall) into ``tgt``; returns the report lines."""
    if tgt.manifest.exists():
        uninstall(tgt)
    created = not tgt.hooks_file.exists()
    original = None if created else tgt.hooks_file.read_text(encoding="utf-8")
    # Repair, never duplicate: a group of ours still there (its record lost, or from a copy
    # of the plugin that moved) is replaced, not joined by a second one.
    document, stale = without_ours(read_hooks_file(tgt.hooks_file))
    ours = our_hooks(plugin_root)
    merged, placed = merge_hooks(document, ours)
    skills = _skill_copies(plugin_root / "skills", tgt.skills_dir)
    # Every folder this install creates (the skills', the hooks file's, the config's), so
    # uninstall leaves no empty `.codex/` behind; and whether the config is new, so an
    # uninstall that empties it removes it.
    new_dirs = [
        *_missing_dirs(tgt.skills_dir),
        *_missing_dirs(tgt.hooks_file.parent),
        *_missing_dirs(tgt.config_file.parent),
    ]
    entries = {}
    for event, g in placed:
        group = merged["hooks"][event][g]
        for h, handler in enumerate(group["hooks"]):
            key = codex_trust.trust_key(str(tgt.hooks_file), event, g, h)
            entries[key] = codex_trust.trusted_hash(event, group.get("matcher"), handler)
    manifest = {
        "version": 1,
        "scope": tgt.scope,
        "hooks_file": str(tgt.hooks_file),
        "created_hooks_file": created,
        # The user's file as it was, given back byte for byte at uninstall when nothing else
        # changed it (None: there was none, or it held stale groups of ours).
        "original_hooks": original if not stale else None,
        "created_dirs": [str(d) for d in new_dirs],
        "groups": [{"event": e, "group": merged["hooks"][e][g]} for e, g in placed],
        "skills": [str(dest) for _, dest in skills],
        "config_file": str(tgt.config_file),
        "created_config": not tgt.config_file.exists(),
        "trust_keys": [],
    }
    # The manifest first: whatever fails after this, uninstall can still clean up.
    _write_json(tgt.manifest, manifest)
    for source, dest in skills:
        shutil.copytree(source, dest)
    _write_json(tgt.hooks_file, merged)
    lines = [
        f"autopilot-codex: installed for Codex ({tgt.scope}).",
        *([f"  repaired: {stale} earlier group(s) of ours replaced"] if stale else []),
        f"  hooks: {tgt.hooks_file} ({', '.join(ours)})",
        f"  skills: {len(skills)} in {tgt.skills_dir}",
    ]
    try:
        _trust(tgt.config_file, entries)
    except BridgeError as exc:
        lines.append(f"  trust: NOT written, so Codex will skip these hooks: {exc}")
    else:
        manifest["trust_keys"] = sorted(entries)
        _write_json(tgt.manifest, manifest)
        lines.append(f"  trust: {len(entries)} hooks trusted in {tgt.config_file}")
    if tgt.repo is not None and not _project_trusted(tgt.config_file, tgt.repo):
        lines.append(
            f"  project: Codex loads {tgt.hooks_file} only in a trusted project; run "
            f"`codex exec --trust` once in {tgt.repo}, or accept its prompt in the Codex TUI"
        )
    return lines


def uninstall(tgt: Target) -> list[str]:
    """Remove exactly what the recorded install added; returns the report lines."""
    if not tgt.manifest.exists():
        return [f"autopilot-codex: nothing to uninstall for Codex ({tgt.scope}): no {tgt.manifest}"]
    try:
        manifest = json.loads(tgt.manifest.read_text(encoding="utf-8"))
    except ValueError:
        raise BridgeError(f"{tgt.manifest} is damaged; remove our hooks by hand") from None
    if not believed(manifest, tgt.hooks_file, tgt.skills_dir, tgt.config_file):
        raise BridgeError(
            f"{tgt.manifest} names places no install here writes; nothing was removed "
            "(remove the file if you did not put it there)"
        )
    hooks_file = Path(manifest["hooks_file"])
    if hooks_file.exists():
        remaining = unmerge_hooks(read_hooks_file(hooks_file), manifest.get("groups", []))
        original = manifest.get("original_hooks")
        if manifest.get("created_hooks_file") and remaining == {"hooks": {}}:
            hooks_file.unlink()
        elif isinstance(original, str) and _same_document(original, remaining):
            atomic_write(hooks_file, original, keep_mode=True)
        else:
            _write_json(hooks_file, remaining)
    for skill in manifest.get("skills", []):
        shutil.rmtree(skill, ignore_errors=True)
    config = Path(manifest.get("config_file", tgt.config_file))
    keys = manifest.get("trust_keys", [])
    if keys and config.exists():
        text = config.read_text(encoding="utf-8")
        cleaned = codex_trust.remove_trust(text, keys)
        if manifest.get("created_config") and not cleaned.strip():
            config.unlink()  # ours, and nothing but our trust was ever in it
        elif cleaned != text:
            atomic_write(config, cleaned, keep_mode=True)
    tgt.manifest.unlink()
    # Deepest first, and only an empty one: the user's own skills and files stay.
    for folder in sorted(set(manifest.get("created_dirs", [])), key=lambda f: -len(Path(f).parts)):
        with contextlib.suppress(OSError):
            Path(folder).rmdir()
    return [f"autopilot-codex: uninstalled from Codex ({tgt.scope}); your own hooks are kept."]


def _same_document(text: str, document: Mapping[str, Any]) -> bool:
    """Whether the user's original text parses to ``document`` (then it is given back as is)."""
    try:
        parsed = json.loads(text or "{}")
    except ValueError:
        return False
    if isinstance(parsed, dict):
        parsed.setdefault("hooks", {})
    return bool(parsed == document)


def _missing_dirs(folder: Path) -> list[Path]:
    """The folders an install will create down to ``folder``, deepest first."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _skill_copies(source: Path, dest_root: Path) -> list[tuple[Path, Path]]:
    """(skill folder, where its copy goes) for every skill; refuses to overwrite."""
    pairs = [
        (skill.parent, dest_root / f"{SKILL_PREFIX}{skill.parent.name}")
        for skill in sorted(source.glob("*/SKILL.md"))
    ]
    for skill, dest in pairs:
        if _same_skill(skill, dest):
            shutil.rmtree(dest)  # our own copy, its record lost: replaced, not refused
        elif dest.exists():
            raise BridgeError(
                f"{dest} exists and was not installed by autopilot-codex; move it away"
            )
    return pairs


def _trust(config: Path, entries: Mapping[str, str]) -> None:
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    updated = codex_trust.set_trust(text, entries)
    if updated != text:
        atomic_write(config, updated, keep_mode=True)


def _project_trusted(config: Path, repo: Path) -> bool:
    if not config.exists():
        return False
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:  # Python 3.10: look for the table Codex writes
        return f"[projects.{toml_string(str(repo))}]" in config.read_text()
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError:
        return False
    project = data.get("projects", {}).get(str(repo), {})
    return isinstance(project, dict) and project.get("trust_level") == "trusted"


class CodexInstaller:
    """`autopilot-codex install codex [--user|--project]` and its uninstall."""

    def install(self, scope: str, env: Mapping[str, str], cwd: Path) -> list[str]:
        return install(target(scope, env=env, cwd=cwd))

    def uninstall(self, scope: str, env: Mapping[str, str], cwd: Path) -> list[str]:
        return uninstall(target(scope, env=env, cwd=cwd))


INSTALLER = CodexInstaller()


def _same_skill(source: Path, copy: Path) -> bool:
    """Whether ``copy`` is a copy of our skill ``source`` (its SKILL.md unchanged)."""
    try:
        return (copy / "SKILL.md").read_bytes() == (source / "SKILL.md").read_bytes()
    except OSError:
        return False
