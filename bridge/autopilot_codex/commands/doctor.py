"""`autopilot-codex doctor`: is everything in place for a loop? Each line says what to fix."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

from ..config import load_config
from ..errors import BridgeError
from ..paths import find_worktree, state_home


@dataclass(frozen=True)
class Check:
    ok: bool
    text: str
    # A fact to know, neither a pass nor a fault: shown without "ok" beside it.
    note: bool = False


def run_checks(cwd: str) -> list[Check]:
    checks = [
        Check(sys.version_info >= (3, 10), f"Python {sys.version.split()[0]} ({sys.executable})")
    ]
    checks.append(
        Check(
            shutil.which("git") is not None,
            "git on PATH" if shutil.which("git") else "git is not on PATH: install git",
        )
    )
    claude = shutil.which("claude")
    checks.append(
        Check(
            claude is not None,
            f"Claude Code CLI: {claude}"
            if claude
            else "`claude` is not on PATH: install Claude Code (https://code.claude.com), "
            "then run `autopilot-codex install` again",
        )
    )
    try:
        config = load_config()
        checks.append(
            Check(
                True,
                f"settings: manager {config.model} via the {config.api} API, budget ${config.budget_usd:.2f}, review {config.review}",
            )
        )
    except BridgeError as exc:
        checks.append(Check(False, f"settings: {exc}"))
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    base = os.environ.get("OPENAI_BASE_URL", "").strip()
    if key:
        checks.append(Check(True, "OPENAI_API_KEY is set" + (f" (server {base})" if base else "")))
    else:
        checks.append(
            Check(
                False,
                "OPENAI_API_KEY is not set. Set it where Claude Code starts, e.g. "
                "`export OPENAI_API_KEY=sk-...` in your shell profile, then restart Claude Code. "
                "For a local OpenAI-compatible server also set OPENAI_BASE_URL=http://127.0.0.1:11434/v1 "
                "and AUTOPILOT_CODEX_API=chat (any non-empty key works there).",
            )
        )
    worktree = find_worktree(cwd)
    if worktree:
        checks.append(Check(True, f"git worktree: {worktree}"))
    else:
        checks.append(Check(True, f"{cwd} is not in a git repository (loops run inside one)", True))
    checks.append(Check(True, f"state home: {state_home()}", True))
    return checks


def render(checks: list[Check]) -> str:
    lines = [f"{'--  ' if c.note else 'ok  ' if c.ok else 'FIX '} {c.text}" for c in checks]
    if all(c.ok for c in checks):
        lines.append(
            "Ready. In Claude Code, inside a git repository: /autopilot-codex:codex-plan <goal>"
        )
    else:
        lines.append("Not ready: fix the lines marked FIX, then run this again.")
    return "\n".join(lines)
