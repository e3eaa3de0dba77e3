"""`doctor` for Claude Code: its CLI on PATH and our plugin in its record of plugins."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ... import searchpath
from ...host import MISSING, NOTE, READY, HostReport, cli_absent
from .boundary import claude_dir

PLUGIN = "autopilot-codex"


def report(env: Mapping[str, str]) -> HostReport:
    binary = searchpath.which("claude", env.get("PATH"))
    if binary is None:
        return cli_absent(
            "Claude Code",
            "`claude` is not on PATH (Claude Code): install Claude Code "
            "(https://code.claude.com), then run `autopilot-codex install`",
        )
    cli = (READY, f"Claude Code CLI: {binary}")
    found = _claude_plugin(env)
    if found is None:
        missing = (
            f"the {PLUGIN} plugin is not installed in Claude Code: run `autopilot-codex "
            "install` (check with `claude plugin list`)"
        )
        return HostReport("Claude Code", MISSING, (cli, (MISSING, missing)))
    plugin = (READY, f"Claude Code plugin: {found}")
    return HostReport("Claude Code", READY, (cli, plugin, *spend_notes(env)))


# Claude Code's default model with an API key (2.1.332).
DEFAULT_MODEL = "claude-opus-5-5"


def spend_notes(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """What the budget sees of Claude Code's own spend, and what it cannot."""
    notes = [
        (
            NOTE,
            "Claude Code's spend: read from its session transcript and its subagents' "
            "records at each hook, at the cost Claude Code wrote for each message (costUSD) "
            "where it wrote one, else at list prices; a model not in the table is priced at "
            "its dearest row and shown as estimated (~) (config implementer_prices adds rows)",
        )
    ]
    from .prices import DEAREST, price_of

    # The model Claude Code runs when none is chosen per session: ANTHROPIC_MODEL, else its
    # own default with an API key.
    model = env.get("ANTHROPIC_MODEL", "").strip() or DEFAULT_MODEL
    if not price_of(model)[1]:
        notes.append(
            (
                NOTE,
                f"Claude Code's model {model} is not in the price table: where Claude Code "
                "writes no cost of its own, its spend is estimated at the dearest row "
                f"(${DEAREST.input:g} in, ${DEAREST.output:g} out per million tokens); config "
                "implementer_prices adds a row",
            )
        )
    if not any(env.get(k, "").strip() for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")):
        notes.append(
            (
                NOTE,
                "no Anthropic API key in the environment: if Claude Code is signed in to a "
                "Claude plan, the implementer's dollars are notional (list prices of the "
                "tokens, not a bill); --max-tokens caps what the plan counts",
            )
        )
    return notes


def _claude_plugin(env: Mapping[str, str]) -> str | None:
    """Our plugin's id in Claude Code's record of installed plugins, or None. Reading the
    file costs nothing; `claude plugin list` would start a Node process."""
    root = claude_dir(env, Path(env["HOME"]) if env.get("HOME") else Path.home())
    try:
        document = json.loads((root / "plugins" / "installed_plugins.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return _plugin_key(document)


def _plugin_key(document: Any) -> str | None:
    """`{"version": 2, "plugins": {"<name>@<marketplace>": [...]}}` as Claude Code 2.1 writes it."""
    plugins = document.get("plugins") if isinstance(document, dict) else None
    if not isinstance(plugins, dict):
        return None
    return next((k for k in plugins if str(k).startswith(f"{PLUGIN}@")), None)
