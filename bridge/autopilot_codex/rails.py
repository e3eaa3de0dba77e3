"""Safety rails: PreToolUse denials while a loop runs. PostToolUse cannot undo a tool, so the
destructive, the irreversible and the secret are stopped here, before they happen.

Every rule has an id. The user relaxes a rule only by naming its id (or a pattern matching the
command) in `rails_allow`, and adds rules with `rails_deny` patterns; nothing else gets past.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .config import Config
from .hookio import HookInput
from .paths import state_home
from .secrets import is_secret_path

SHELL_TOOLS = frozenset({"Bash", "exec_command", "shell"})
FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "apply_patch"})


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re.Pattern[str]
    why: str


def _rule(rule_id: str, pattern: str, why: str) -> Rule:
    return Rule(rule_id, re.compile(pattern, re.IGNORECASE), why)


# Matched against each simple command of a shell line (split on ; && || | and newlines).
_GIT = r"^\s*(?:sudo\s+)?git(?:\s+-[cC]\s+\S+)*\s+"
COMMAND_RULES = (
    _rule(
        "force-push",
        _GIT + r"push\b.*(\s--force\b|\s--force-with-lease\b|\s-[a-z]*f\b|\s\+\S)",
        "force pushes rewrite shared history",
    ),
    _rule(
        "push",
        _GIT + r"push\b",
        'pushing publishes work; allow it with rails_allow: ["push"] or AUTOPILOT_CODEX_ALLOW_PUSH=1',
    ),
    _rule(
        "reset-hard", _GIT + r"reset\b.*--hard\b", "git reset --hard throws away uncommitted work"
    ),
    _rule("clean", _GIT + r"clean\b.*\s-[a-z]*[fdx]", "git clean deletes untracked files"),
    _rule(
        "branch-delete",
        _GIT + r"branch\b.*\s(-[a-z]*d\b|--delete\b)",
        "branch deletion loses commits",
    ),
    _rule(
        "checkout-discard",
        _GIT + r"(checkout|restore)\b.*\s(--\s+\.|\.)\s*$",
        "discarding every change in the tree",
    ),
    _rule(
        "publish",
        r"^\s*(?:sudo\s+)?(npm|yarn|pnpm|bun)\s+publish\b|^\s*twine\s+upload\b|^\s*cargo\s+publish\b|^\s*(poetry|uv|flit|hatch)\s+publish\b|^\s*gem\s+push\b|^\s*docker\s+push\b",
        "publishing a package is irreversible",
    ),
    _rule(
        "infra",
        r"^\s*(?:sudo\s+)?(terraform|tofu)\s+(apply|destroy|import)\b|^\s*kubectl\s+(delete|apply|replace|patch|scale|drain|create)\b|^\s*helm\s+(install|upgrade|uninstall|delete|rollback)\b|^\s*pulumi\s+(up|destroy)\b",
        "infrastructure changes reach beyond the repository",
    ),
    _rule(
        "secret-env",
        r"\$\{?(OPENAI_API_KEY|ANTHROPIC_API_KEY|AWS_SECRET_ACCESS_KEY|GITHUB_TOKEN)\b|\bprintenv\b|^\s*env\s*$",
        "reading credentials from the environment",
    ),
)

def check(payload: HookInput, config: Config, worktree: Path) -> str | None:
    """The reason to deny this tool call, or None to let it run."""
    if payload.tool_name in SHELL_TOOLS:
        command = payload.tool_input.get("command")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        return check_command(
            command if isinstance(command, str) else "", config, worktree, payload.cwd
        )
    if payload.tool_name in FILE_TOOLS:
        paths = [payload.tool_input.get(k) for k in ("file_path", "notebook_path", "path")]
        if payload.tool_name == "apply_patch":
            paths += _patch_paths(str(payload.tool_input.get("command", "")))
        for raw in paths:
            if isinstance(raw, str) and raw:
                reason = check_path(raw, config, worktree)
                if reason:
                    return reason
    return None


def check_command(command: str, config: Config, worktree: Path, cwd: str | None) -> str | None:
    for pattern in config.rails_deny:
        if _search(pattern, command):
            return _deny("user-deny", f"denied by your configuration ({pattern})")
    here = Path(cwd) if cwd else worktree
    home = _loop_home()  # once per command, not once per word
    for part in _simple_commands(command):
        for rule in COMMAND_RULES:
            if rule.id == "push" and config.allow_push:
                continue
            if rule.pattern.search(part) and not _user_allows(part, config, rule.id):
                return _deny(rule.id, rule.why)
        reason = _rm_reason(part, worktree, here)
        if reason and not _user_allows(part, config, "rm"):
            return _deny("rm", reason)
        for word in _words(part):
            found = _path_reason(word, here, home)
            if found and not _user_allows(part, config, found[0]):
                return _deny(*found)
    return None


def check_path(raw: str, config: Config, worktree: Path) -> str | None:
    if any(_search(p, raw) for p in config.rails_deny):
        return _deny("user-deny", f"denied by your configuration ({raw})")
    reason = _path_reason(raw, worktree, _loop_home())
    if reason and not _user_allows(raw, config, reason[0]):
        return _deny(*reason)
    return None


def _path_reason(raw: str, cwd: Path, loop_home: Path) -> tuple[str, str] | None:
    text = raw.strip("'\"")
    if is_secret_path(text):
        return ("secrets", f"{text} holds credentials; the loop does not read or write them")
    if _inside(_resolve(text, cwd), loop_home):
        return ("state", "the loop's own state is written only by autopilot-codex itself")
    return None


def _rm_reason(part: str, worktree: Path, cwd: Path) -> str | None:
    words = _words(part)
    while words and words[0] in ("sudo", "command", "builtin"):
        words = words[1:]
    if not words or PurePosixPath(words[0]).name != "rm":
        return None
    flags = "".join(
        w.lstrip("-") for w in words[1:] if w.startswith("-") and not w.startswith("--")
    )
    long_flags = {w for w in words[1:] if w.startswith("--")}
    recursive = "r" in flags.lower() or "--recursive" in long_flags
    if not recursive:
        return None
    root = worktree.resolve()
    for target in (w for w in words[1:] if not w.startswith("-")):
        if "$" in target or "`" in target:
            return f"rm -r of {target}: cannot tell what it expands to"
        glob = min((target.index(c) for c in "*?[" if c in target), default=None)
        base = target if glob is None else (target[:glob].rpartition("/")[0] or ".")
        resolved = _resolve(base, cwd)
        if resolved == root or not _inside(resolved, root):
            return f"rm -r of {target} reaches outside the worktree or removes its root"
    return None


def _user_allows(text: str, config: Config, rule_id: str) -> bool:
    return any(
        entry == rule_id or (entry not in _IDS and _search(entry, text))
        for entry in config.rails_allow
    )


_IDS = frozenset({r.id for r in COMMAND_RULES} | {"rm", "secrets", "state", "user-deny"})


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return pattern in text


def _deny(rule_id: str, why: str) -> str:
    return (
        f"autopilot-codex safety rail [{rule_id}]: {why}. This is blocked while the loop runs; "
        "ask the user if it is really needed (they can allow it in the autopilot-codex config)."
    )


def _simple_commands(command: str) -> list[str]:
    return [p for p in re.split(r"&&|\|\||[;|\n]|\$\(|`", command) if p.strip()]


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part, comments=True)
    except ValueError:
        return part.split()


def _resolve(raw: str, cwd: Path) -> Path:
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = cwd / path
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte or a lone surrogate
        return Path(os.path.normpath(path))


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _loop_home() -> Path:
    try:
        return state_home().resolve()
    except (OSError, RuntimeError):
        return state_home()


def _patch_paths(patch: str) -> Iterable[str]:
    return re.findall(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", patch, re.MULTILINE)
