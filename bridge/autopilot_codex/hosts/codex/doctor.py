"""`doctor` for Codex: its CLI, our hooks in each hooks file, and Codex's trust in them.

Our hooks there but untrusted or modified is the one fault by itself: Codex skips them
without a word.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ... import searchpath
from ...errors import BridgeError
from ...host import BROKEN, MISSING, NOTE, READY, HostReport, cli_absent
from . import install as codex_install
from . import trust as codex_trust
from .config_toml import top_level

PLUGIN = "autopilot-codex"
INSTALL_CODEX = "autopilot-codex install codex --user"


def report(env: Mapping[str, str], repo: Path | None) -> HostReport:
    binary = searchpath.which("codex", env.get("PATH"))
    if binary is None:
        return cli_absent(
            "Codex",
            "`codex` is not on PATH (Codex): install Codex (npm install -g "
            f"@openai/codex), then run `{INSTALL_CODEX}`",
        )
    home = codex_install.codex_home(env)
    config = home / "config.toml"
    files = [(home / "hooks.json", "--user")]
    if repo is not None:
        files.append((repo / ".codex" / "hooks.json", "--project"))
    lines = [(READY, f"Codex CLI: {binary}")]
    for hooks_file, scope in files:
        state, line = _codex_file(hooks_file, config)
        if state == BROKEN:
            line += f": run `autopilot-codex install codex {scope}` again"
        if state != MISSING:
            lines.append((state, line))
    if (plugin := _codex_plugin(config)) is not None:
        lines.append(plugin)
    states = {state for state, _ in lines[1:]}
    if not states:
        missing = f"our hooks are not installed for Codex: run `{INSTALL_CODEX}` (or --project)"
        return HostReport("Codex", MISSING, (*lines, (MISSING, missing)))
    if shutil.which(PLUGIN, path=env.get("PATH")) is None:
        lines.append(
            (
                NOTE,
                f"`{PLUGIN}` is not on PATH, so Codex's shell (the codex-plan skill) cannot run "
                "it: put ~/.local/bin on PATH and run `install codex` again (it links the "
                "launcher there), or add the repository's bin/ to PATH where Codex starts",
            )
        )
    lines.extend(spend_notes(env, config))
    return HostReport("Codex", BROKEN if BROKEN in states else READY, tuple(lines))


def spend_notes(env: Mapping[str, str], config: Path) -> list[tuple[str, str]]:
    """What the budget sees of Codex's own spend, and what it cannot."""
    from .prices import DEAREST, price_of

    notes = [
        (
            NOTE,
            "Codex's spend: read from its session rollout ($CODEX_HOME/sessions, the totals "
            "of its token_count records) at each hook, priced at list prices; a session run "
            "with --ephemeral, or a Codex whose records hold no usage, is not seen (status "
            "says so)",
        )
    ]
    model = top_level(config, "model")
    if model and not price_of(model)[1]:
        notes.append(
            (
                NOTE,
                f"Codex's model {model} is not in the price table: its spend is priced at the "
                f"dearest row (${DEAREST.input:g} in, ${DEAREST.output:g} out per million "
                "tokens); config implementer_prices adds a row",
            )
        )
    keyed = any(env.get(k, "").strip() for k in ("OPENAI_API_KEY", "CODEX_API_KEY"))
    if not keyed and top_level(config, "model_provider") in ("", "openai"):
        notes.append(
            (
                NOTE,
                "no OpenAI API key in the environment: if Codex is signed in with a ChatGPT "
                "plan, the implementer's dollars are notional (list prices of the tokens, not "
                "a bill); --max-tokens caps what the plan counts",
            )
        )
    return notes


def _codex_file(hooks_file: Path, config: Path) -> tuple[str, str]:
    """The state of our install into one hooks file, and the line that says so."""
    manifest_path = hooks_file.with_name(codex_install.MANIFEST_NAME)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        groups = [(g["event"], g["group"]) for g in manifest["groups"]]
    except FileNotFoundError:
        return MISSING, ""
    except (OSError, ValueError, KeyError, TypeError):
        return BROKEN, f"Codex hooks: {manifest_path} is damaged"
    try:
        document = codex_install.read_hooks_file(hooks_file)
    except BridgeError as exc:
        return BROKEN, f"Codex hooks: {exc}"
    expected = _trust_expected(str(hooks_file), document, groups)
    if expected is None:
        return BROKEN, f"Codex hooks: ours were removed from {hooks_file}"
    if wrong := _launcher_problem(hooks_file, document, len(groups)):
        return BROKEN, wrong
    if sys.version_info < (3, 11):
        return READY, f"Codex hooks: {hooks_file} (trust unchecked: that needs Python 3.11)"
    trusted = _trusted(config)
    untrusted = [k for k in expected if k not in trusted]
    modified = [k for k, h in expected.items() if k in trusted and trusted[k] != h]
    if untrusted or modified:
        what = ", ".join(
            part
            for part in (
                f"{len(untrusted)} untrusted" if untrusted else "",
                f"{len(modified)} modified since trusted" if modified else "",
            )
            if part
        )
        return BROKEN, (
            f"Codex hooks: {hooks_file} has {what} of our {len(expected)} hooks, which Codex "
            f"skips without a word (trust lives in {config})"
        )
    return READY, f"Codex hooks: {hooks_file}, all {len(expected)} trusted"


def _launcher_problem(hooks_file: Path, document: Mapping[str, Any], recorded: int) -> str:
    """A launcher our hooks run that is not there (each hook would exit 127, which Codex
    ignores: the loop would go on unsupervised), commands an older install wrote that find
    bash on PATH, or more groups of ours than one install writes (every hook would answer
    twice); "" when none."""
    hooks = document.get("hooks", {})
    launchers = [
        launcher
        for groups in hooks.values()
        if isinstance(groups, list)
        for launcher in map(codex_install.launcher_of, groups)
        if launcher is not None
    ]
    for launcher in dict.fromkeys(launchers):
        if not Path(launcher).is_file():
            return (
                f"Codex hooks: {hooks_file} runs {launcher}, which is missing (moved or "
                "deleted): every hook would fail and Codex would run the loop unsupervised"
            )
    if any(
        str(command).startswith("bash ")
        for groups in hooks.values()
        if isinstance(groups, list)
        for group in groups
        if codex_install.launcher_of(group) is not None
        for command in _commands(group)
    ):
        return (
            f"Codex hooks: {hooks_file} starts `bash` by name (an older install), so a bash "
            "on a PATH folder the implementer writes would run for every hook, unwalled"
        )
    if len(launchers) > recorded:
        return (
            f"Codex hooks: {hooks_file} holds {len(launchers)} groups of ours where one "
            f"install writes {recorded}: a second copy, so every hook would answer twice"
        )
    return ""


def _trust_expected(
    hooks_file: str, document: Mapping[str, Any], groups: list[tuple[str, Any]]
) -> dict[str, str] | None:
    """Trust key → the hash Codex would compute now, for each of our recorded groups where
    it sits in the file today; None when one of them is gone."""
    hooks = document.get("hooks", {})
    expected: dict[str, str] = {}
    for event, recorded in groups:
        existing = hooks.get(event)
        # Found by its commands, so an edited timeout or matcher shows as "modified".
        found = [
            (g, group)
            for g, group in enumerate(existing if isinstance(existing, list) else [])
            if _commands(group) == _commands(recorded)
        ]
        if not found:
            return None
        g, group = found[0]
        for h, handler in enumerate(group.get("hooks") or []):
            key = codex_trust.trust_key(hooks_file, event, g, h)
            expected[key] = codex_trust.trusted_hash(event, group.get("matcher"), handler)
    return expected


def _commands(group: Any) -> list[Any]:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return (
        [h.get("command") for h in handlers if isinstance(h, dict)]
        if isinstance(handlers, list)
        else []
    )


def _trusted(config: Path) -> dict[str, str]:
    try:
        return codex_trust.read_trusted(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return {}


def _codex_plugin(config: Path) -> tuple[str, str] | None:
    """The plugin form (`codex plugin add`), when config.toml names it: its hooks are keyed
    by plugin id and relative path and hashed over the raw command, so trust is checked
    against our own hooks file."""
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = re.search(rf'^\s*\[plugins\."({re.escape(PLUGIN)}@[^"]+)"\]', text, re.MULTILINE)
    if found is None:
        return None
    plugin_id = found.group(1)
    try:
        template = json.loads(
            (codex_install.PLUGIN_ROOT / codex_install.HOOKS_TEMPLATE).read_text()
        )
    except (OSError, ValueError):
        return BROKEN, f"Codex plugin {plugin_id}: our hooks/codex.json cannot be read"
    expected = codex_trust.trust_entries(f"{plugin_id}:{codex_install.HOOKS_TEMPLATE}", template)
    trusted = codex_trust.read_trusted(text)
    if sys.version_info >= (3, 11) and any(trusted.get(k) != h for k, h in expected.items()):
        return BROKEN, (
            f"Codex plugin {plugin_id}: its hooks are not all trusted, so Codex skips them; "
            "accept them when the Codex TUI asks at start-up (/hooks lists them)"
        )
    return READY, f"Codex plugin: {plugin_id}, its {len(expected)} hooks trusted"
