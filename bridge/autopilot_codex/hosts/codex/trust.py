"""Codex hook trust: the key and hash Codex expects, and editing only our own trust tables.

Codex runs a user, project or plugin hook only when ``$CODEX_HOME/config.toml`` holds

    [hooks.state."<hooks file>:<event_label>:<group>:<handler>"]
    trusted_hash = "sha256:<hex>"

where the hash is over the hook's normalised identity (``command_hook_hash`` in Codex's
``discovery.rs``). Untrusted hooks are skipped without a word, so getting this right is what
makes an install work. The rest of the user's TOML is kept byte for byte: we edit text,
touching only tables whose header names one of our keys (Python 3.10 has no TOML parser).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import BridgeError
from .boundary import toml_string

# PascalCase hook event → the label Codex uses in trust keys and hashes.
EVENT_LABELS = {
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "user_prompt_submit",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "Interrupt": "interrupt",
}
# Events whose matcher Codex ignores, and so leaves out of the hash.
_NO_MATCHER = frozenset({"user_prompt_submit", "stop", "interrupt"})
DEFAULT_TIMEOUT = 600

BYPASS_HINT = (
    "run Codex with --dangerously-bypass-hook-trust, or trust the hooks in the Codex TUI "
    "(it asks at start-up)"
)


def event_label(event: str) -> str:
    try:
        return EVENT_LABELS[event]
    except KeyError:
        raise BridgeError(f"Codex has no hook event named {event!r}") from None


def trust_key(hooks_file: str, event: str, group: int, handler: int) -> str:
    """The ``hooks.state`` key of one handler of a hooks file (absolute path, as Codex
    spells it)."""
    return f"{hooks_file}:{event_label(event)}:{group}:{handler}"


def trusted_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the compact, key-sorted JSON identity Codex hashes for a command
    handler: the raw command (before ``${...}`` substitution), timeout (default 600), async
    and statusMessage, plus the matcher for events that use one."""
    label = event_label(event)
    timeout = handler.get("timeout", handler.get("timeoutSec", DEFAULT_TIMEOUT))
    normalised: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command", ""),
        "timeout": max(int(timeout), 1),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": label, "hooks": [normalised]}
    if matcher is not None and label not in _NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trust_entries(hooks_file: str, document: Mapping[str, Any]) -> dict[str, str]:
    """Key → hash for every command handler of a ``hooks.json`` document."""
    entries: dict[str, str] = {}
    hooks = document.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, Mapping) else ():
        if event not in EVENT_LABELS or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            if not isinstance(group, Mapping):
                continue
            matcher = group.get("matcher")
            for h, handler in enumerate(group.get("hooks") or []):
                if isinstance(handler, Mapping) and handler.get("type") == "command":
                    key = trust_key(hooks_file, event, g, h)
                    entries[key] = trusted_hash(event, matcher, handler)
    return entries


# -- config.toml text editing ------------------------------------------------------------------


def _header(key: str) -> str:
    return f"[hooks.state.{toml_string(key)}]"


_TABLE_LINE = re.compile(r"^\s*\[")
# Ways to write hooks.state that a `[hooks.state."k"]` table cannot be added next to.
_INLINE_STATE = re.compile(r"^\s*(hooks\s*\.\s*)?state\s*=|^\s*hooks\s*=", re.MULTILINE)


def _find_table(lines: list[str], key: str) -> tuple[int, int] | None:
    """[start, end) line range of our table (header through the line before the next table)."""
    header = _header(key)
    for i, line in enumerate(lines):
        if line.strip() == header:
            end = i + 1
            while end < len(lines) and not _TABLE_LINE.match(lines[end]):
                end += 1
            return i, end
    return None


def set_trust(text: str, entries: Mapping[str, str]) -> str:
    """``text`` with a ``trusted_hash`` for every key: an existing table of ours gets its
    hash line replaced, a missing one is appended. Raises BridgeError when the file writes
    ``hooks.state`` in a form we cannot extend safely."""
    if _INLINE_STATE.search(text):
        raise BridgeError(
            "config.toml sets hooks or hooks.state inline, so the hook trust entries cannot be "
            f"added safely; {BYPASS_HINT}"
        )
    lines = text.splitlines(keepends=True)
    for key, value in entries.items():
        hash_line = f"trusted_hash = {toml_string(value)}\n"
        found = _find_table(lines, key)
        if found is None and (toml_string(key) in text or f"'{key}'" in text):
            raise BridgeError(
                f"config.toml already names the hook {key!r} in a form we do not edit; "
                f"{BYPASS_HINT}"
            )
        if found is None:
            if lines and not lines[-1].endswith("\n"):
                lines.append("\n")
            # Each table we add owns the blank line before it, so removal restores the text.
            lines += ["\n"] if lines else []
            lines += [_header(key) + "\n", hash_line]
            continue
        start, end = found
        body = [ln for ln in lines[start + 1 : end] if not ln.lstrip().startswith("trusted_hash")]
        lines[start + 1 : end] = [hash_line, *body]
    result = "".join(lines)
    _check_parses(result)
    return result


def remove_trust(text: str, keys: Iterable[str]) -> str:
    """``text`` without our tables for ``keys`` (and the blank line we put before each)."""
    lines = text.splitlines(keepends=True)
    for key in keys:
        found = _find_table(lines, key)
        if found is None:
            continue
        start, end = found
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1  # the blank lines before the next table belong to it
        if start > 0 and not lines[start - 1].strip():
            start -= 1
        del lines[start:end]
    return "".join(lines)


def _check_parses(text: str) -> None:
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:  # Python 3.10: the inline-form check above has to do
        return
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BridgeError(
            f"config.toml would not parse after adding the hook trust entries ({exc}); "
            f"{BYPASS_HINT}"
        ) from None


def read_trusted(text: str) -> dict[str, str]:
    """Key → trusted_hash of every ``hooks.state`` entry (needs tomllib; {} without it)."""
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:
        return {}
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}
    state = data.get("hooks", {}).get("state", {})
    if not isinstance(state, dict):
        return {}
    return {
        k: str(v.get("trusted_hash"))
        for k, v in state.items()
        if isinstance(v, dict) and v.get("trusted_hash")
    }
