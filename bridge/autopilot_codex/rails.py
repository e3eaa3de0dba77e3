"""Safety rails: PreToolUse denials while a loop runs. PostToolUse cannot undo a tool, so the
destructive, the irreversible, the secret and the supervisor's own controls are stopped here,
before they happen.

A shell line is read as the shell reads it (`shell`): every simple command it would run, with
its wrappers removed, is judged by the rules in `rail_rules` and `rail_control`, and its words
and redirections by the path rules here. Every rule has an id. The user relaxes a rule only by
naming its id (or a pattern matching the command) in `rails_allow`, and adds rules with
`rails_deny` patterns; nothing else gets past.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path

from . import rail_control, rail_rules, shell
from .config import Config, config_file
from .hookio import HookInput
from .paths import state_home, state_home_str
from .rail_rules import Finding, Where, inside, resolve
from .secrets import is_secret_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .hosts import Host

SHELL_TOOLS = frozenset({"Bash", "exec_command", "shell"})
FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "apply_patch"})

RULE_IDS = (
    "force-push",
    "push",
    "reset-hard",
    "clean",
    "branch-delete",
    "checkout-discard",
    "publish",
    "infra",
    "secret-env",
    "rm",
    "secrets",
    "state",
    "supervisor",
    "host-settings",
    "unreadable",
    "user-deny",
)
_IDS = frozenset(RULE_IDS)
# Words these commands print, not files they open: `echo .env >> .gitignore` is fine.
_PRINTERS = frozenset({"echo", "printf"})
# The hosts' settings files, which hold the hooks (and the switch that turns them off).
_HOST_SETTINGS = re.compile(
    r"(^|/)\.claude/settings(\.local)?\.json$|(^|/)\.codex/(config\.toml|hooks\.json)$"
)
# Commands that only read the files they name.
_READERS = frozenset(
    {"cat", "less", "more", "head", "tail", "grep", "rg", "jq", "wc", "diff", "ls", "stat", "file"}
)


def check(
    payload: HookInput, config: Config, worktree: Path, host: Host | None = None
) -> str | None:
    """The reason to deny this tool call, or None to let it run.

    The host names its shell tools and the files a tool call touches (Claude's `file_path`,
    Codex's patch text); without one, every tool name either host uses is covered.
    """
    shell_tools = host.shell_tools if host is not None else SHELL_TOOLS
    if payload.tool_name in shell_tools:
        command = payload.tool_input.get("command")
        if isinstance(command, list):
            # Codex passes argv: quote it back, so `bash -lc "a b"` stays one script.
            command = shlex.join(str(c) for c in command)
        return check_command(
            command if isinstance(command, str) else "", config, worktree, payload.cwd
        )
    if host is None and payload.tool_name in FILE_TOOLS:
        from .hosts import claude, codex

        paths = claude.HOST.touched_paths(payload.tool_name, payload.tool_input)
        paths += codex.HOST.touched_paths(payload.tool_name, payload.tool_input)
    else:
        paths = host.touched_paths(payload.tool_name, payload.tool_input) if host else []
    if paths:
        for raw in paths:
            if isinstance(raw, str) and raw:
                reason = check_path(raw, config, worktree, reading=payload.tool_name == "Read")
                if reason:
                    return reason
    return None


def check_command(command: str, config: Config, worktree: Path, cwd: str | None) -> str | None:
    for pattern in config.rails_deny:
        if _search(pattern, command):
            return _deny("user-deny", f"denied by your configuration ({pattern})")
    where = _where(worktree, config)
    env = {"HOME": os.path.expanduser("~"), "AUTOPILOT_CODEX_HOME": state_home_str()}
    for part in shell.commands(command, env, cwd or str(worktree)):
        normal = " ".join(part.argv)
        denied = next((p for p in config.rails_deny if normal and _search(p, normal)), None)
        if denied:
            return _deny("user-deny", f"denied by your configuration ({denied})")
        for rule_id, why in _findings(part, where):
            if not _user_allows((part.text, normal), config, rule_id):
                return _deny(rule_id, why)
    return None


def check_path(raw: str, config: Config, worktree: Path, *, reading: bool = False) -> str | None:
    if any(_search(p, raw) for p in config.rails_deny):
        return _deny("user-deny", f"denied by your configuration ({raw})")
    found = _path_reason(raw, str(worktree), _where(worktree, config), reading=reading)
    if found and not _user_allows((raw,), config, found[0]):
        return _deny(*found)
    return None


def _findings(command: shell.Command, where: Where) -> Iterable[Finding]:
    yield from rail_control.findings(command, where)
    yield from rail_rules.findings(command, where)
    words = () if command.name in _PRINTERS else command.argv
    reading = command.name in _READERS
    for word in (*words, *command.redirects):
        found = _path_reason(word, command.cwd, where, reading=reading and word in words)
        if found:
            yield found


def _path_reason(raw: str, cwd: str, where: Where, *, reading: bool = False) -> Finding | None:
    text = raw.strip("'\"")
    if not text:
        return None
    # `--file=.env`, `KEY=path`: the value is the path.
    candidates = [text, text.split("=", 1)[1]] if "=" in text[1:] else [text]
    for candidate in candidates:
        if is_secret_path(candidate):
            return (
                "secrets",
                f"{candidate} holds credentials; the loop does not read or write them",
            )
        if re.fullmatch(r"/proc/[^/]+/environ", candidate):
            return (
                "secret-env",
                f"{candidate} holds a process's environment, credentials included",
            )
        if not reading and _HOST_SETTINGS.search(candidate.replace("\\", "/")):
            return (
                "host-settings",
                f"{candidate} decides which hooks the host runs; changing it could switch the "
                "supervisor off",
            )
        resolved = resolve(candidate, cwd)
        if resolved == where.config_file:
            return ("supervisor", "the loop's config.json holds the user's settings, not yours")
        if inside(resolved, where.home) or _glob_reaches(candidate, cwd, where.home):
            return ("state", "the loop's own state is written only by autopilot-codex itself")
    return None


def _glob_reaches(raw: str, cwd: str, home: Path) -> bool:
    """A pattern the shell expands (`~/.autopilot-codex*/secret/*`) names what it matches now."""
    if not any(c in raw for c in "*?["):
        return False
    import glob
    import itertools

    # os.path and glob, not Path.glob: the pattern is often absolute, and Path.glob takes none.
    pattern = os.path.join(cwd, os.path.expanduser(raw))  # noqa: PTH118
    matches = itertools.islice(glob.iglob(pattern), 1000)  # noqa: PTH207
    return any(inside(resolve(match, cwd), home) for match in matches)


def _where(worktree: Path, config: Config) -> Where:
    home = _loop_home()  # once per line, not once per word
    return Where(_real(worktree), home, config_file(home), config.allow_push)


def _user_allows(texts: tuple[str, ...], config: Config, rule_id: str) -> bool:
    return any(
        entry == rule_id or (entry not in _IDS and any(_search(entry, t) for t in texts if t))
        for entry in config.rails_allow
    )


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


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _loop_home() -> Path:
    return _real(state_home())


