"""Safety rails: PreToolUse denials while a loop runs. PostToolUse cannot undo a tool, so the
destructive, the irreversible, the secret and the supervisor's own controls are stopped here,
before they happen.

A shell line is read as the shell reads it (`shell`): every simple command it would run, with
its wrappers removed, is judged by the rules in `records`, in their order; a file tool's path is
judged as a command reading (`cat PATH`) or writing (`> PATH`) it. Every rule has an id. The user relaxes a rule only by
naming its id (or a pattern matching the command) in `rails_allow`, and adds rules with
`rails_deny` patterns; nothing else gets past.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from ..config import Config, config_file
from ..hookio import HookInput
from ..paths import state_home, state_home_str
from . import mcp, shell
from .records import RULE_IDS, RULES
from .rules import Where

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..host import Host, HostSet

_IDS = frozenset(RULE_IDS)
UNKNOWN = "unknown"


# The longest command the rails read. Reading costs time with the length (about 45 us a
# character at worst, measured, for a line of many short commands): past the host's timeout
# (30 s for PreToolUse) the host kills the hook and runs the tool unjudged. A longer command is
# denied as unreadable.
MAX_COMMAND_CHARS = 128 * 1024
# The most files one tool call may name, and the longest path, for the same reason: each path is
# judged in a fraction of a millisecond, and no system opens a path longer than this as written.
MAX_PATHS = 10_000
MAX_PATH_CHARS = 4096


def check(
    payload: HookInput, config: Config, worktree: Path, hosts: HostSet, host: Host | None = None
) -> str | None:
    """The reason to deny this tool call, or None to let it run; an unguarded loop's denial
    says that its rails are a seatbelt. `hosts`: every registered host; `host`: the one
    asking (None: any of them)."""
    denial = _check(payload, config, worktree, hosts, host)
    if denial is None:
        return None
    from ..seatbelt import with_seatbelt

    return with_seatbelt(denial, loop_wall(worktree))


def loop_wall(worktree: Path) -> str:
    """The wall level the worktree's loop recorded, read only for a denial ("" if none)."""
    from .. import surrogates
    from ..paths import project_dir

    try:
        data = surrogates.loads((project_dir(worktree) / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    wall = data.get("wall") if isinstance(data, dict) else None
    return wall if isinstance(wall, str) else ""


def _check(
    payload: HookInput, config: Config, worktree: Path, hosts: HostSet, host: Host | None
) -> str | None:
    """The reason to deny this tool call, or None to let it run.

    The host names its shell tools and the files a tool call touches (its own field for a
    path, a patch's text); without one, every registered host's reading is checked.
    """
    readers: Sequence[Host] = [host] if host is not None else hosts.members
    for each in readers:
        command = each.shell_command(payload.tool_name, payload.tool_input)
        if command is not None:
            return check_command(command, config, worktree, payload.cwd, hosts)
    if payload.tool_name.startswith(mcp.PREFIX):
        return _check_mcp(payload, config, worktree, hosts)
    for each in readers:
        reading = payload.tool_name in each.read_tools
        paths = each.touched_paths(payload.tool_name, payload.tool_input)
        too_much = len(paths) > MAX_PATHS or any(len(p) > MAX_PATH_CHARS for p in paths)
        if too_much and "unreadable" not in config.rails_allow:
            why = (
                f"a tool call naming more than {MAX_PATHS} files, or a path of more than "
                f"{MAX_PATH_CHARS} characters, is more than the rails read within the hook's "
                "time limit; name fewer files at a time"
            )
            return _deny("unreadable", why)
        for raw in paths:
            reason = check_path(raw, config, worktree, hosts, reading=reading)
            if reason:
                return reason
    return None


def _check_mcp(payload: HookInput, config: Config, worktree: Path, hosts: HostSet) -> str | None:
    """An MCP server's tool: each string in its input judged as a path it writes, each command
    field as a shell line (`mcp`). Text that cannot be a path (a newline, past any path's
    length) is judged as a path by nothing."""
    found = mcp.strings(payload.tool_input, MAX_PATHS)
    if len(found) > MAX_PATHS and "unreadable" not in config.rails_allow:
        return _deny("unreadable", f"a tool call of more than {MAX_PATHS} strings is not read")
    for raw in found:
        if raw and "\n" not in raw and len(raw) <= MAX_PATH_CHARS:
            reason = check_path(raw, config, worktree, hosts)
            if reason:
                return reason
    for line in mcp.commands(payload.tool_input):
        reason = check_command(line, config, worktree, payload.cwd, hosts)
        if reason:
            return reason
    return None


def check_command(
    command: str, config: Config, worktree: Path, cwd: str | None, hosts: HostSet
) -> str | None:
    if len(command) > MAX_COMMAND_CHARS and "unreadable" not in config.rails_allow:
        why = (
            f"a command of {len(command)} characters is more than the rails read within the "
            f"hook's time limit ({MAX_COMMAND_CHARS} at most); write long content with the file "
            "tools, or in parts"
        )
        return _deny("unreadable", why)
    for pattern in config.rails_deny:
        if _search(pattern, command):
            return _deny("user-deny", f"denied by your configuration ({pattern})")
    where = _where(worktree, config, hosts)
    env = {"HOME": os.path.expanduser("~"), "AUTOPILOT_CODEX_HOME": state_home_str()}
    # The hosts' config folders, so `$VAR/...` names the records and settings it holds.
    env.update({k: os.environ[k] for k in hosts.config_envs() if os.environ.get(k, "").strip()})
    # `$TMPDIR` is the session's scratch folder when the environment sets it (unset, the
    # shell expands it to nothing, so it stays unknown).
    env.update({k: os.environ[k] for k in ("TMPDIR",) if os.environ.get(k, "").strip()})
    unknown: str | None = None
    for part in shell.commands(command, env, cwd or str(worktree)):
        patched = _patched(part, config, worktree, hosts)
        if patched:
            return patched
        normal = " ".join(part.argv)
        denied = next((p for p in config.rails_deny if normal and _search(p, normal)), None)
        if denied:
            return _deny("user-deny", f"denied by your configuration ({denied})")
        for rule_id, why in _findings(part, where):
            if _user_allows((part.text, normal), config, rule_id):
                continue
            if rule_id != UNKNOWN:
                return _deny(rule_id, why)
            # A rule that names what the line does says more than "cannot be named".
            unknown = unknown or _deny(rule_id, why)
    return unknown


# A shell command Codex takes for its patch tool and applies itself, unseen by its hooks as one.
_PATCHERS = ("apply_patch", "applypatch")


def _patched(part: shell.Command, config: Config, worktree: Path, hosts: HostSet) -> str | None:
    """The denial of a path the patch of an `apply_patch` shell command names, as the tool's."""
    if part.name not in _PATCHERS:
        return None
    text = part.argv[1] if len(part.argv) > 1 else part.stdin or ""
    for each in hosts.members:
        for raw in each.touched_paths("apply_patch", {"command": text}):
            reason = check_path(str(Path(part.cwd, raw)), config, worktree, hosts)
            if reason:
                return reason
    return None


def _findings(command: shell.Command, where: Where) -> Iterator[tuple[str, str]]:
    for rule in RULES:
        for match in rule.match:
            why = match(command, where)
            if why is not None:
                yield rule.id, why


def check_path(
    raw: str, config: Config, worktree: Path, hosts: HostSet, *, reading: bool = False
) -> str | None:
    if any(_search(p, raw) for p in config.rails_deny):
        return _deny("user-deny", f"denied by your configuration ({raw})")
    # A file tool's path is judged as the shell command that would read or write it.
    cwd = str(worktree)
    if reading:
        command = shell.Command(("cat", raw), raw, cwd)
    else:
        command = shell.Command((), raw, cwd, redirects=(raw,))
    for rule_id, why in _findings(command, _where(worktree, config, hosts)):
        if not _user_allows((raw,), config, rule_id):
            return _deny(rule_id, why)
    return None


def _where(worktree: Path, config: Config, hosts: HostSet) -> Where:
    home = _real(state_home())  # once per line, not once per word
    return Where(_real(worktree), home, config_file(home), config.allow_push, hosts)


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
