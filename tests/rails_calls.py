"""The rails' entry points as the hook's entrance calls them: with every registered host
(`hosts.roster`), whose settings, run files, spend records and logins are protected whichever
host asks."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex import hosts
from autopilot_codex.config import Config
from autopilot_codex.hookio import HookInput
from autopilot_codex.host import Host
from autopilot_codex.rails import judge


def check(
    payload: HookInput, config: Config, worktree: Path, host: Host | None = None
) -> str | None:
    return judge.check(payload, config, worktree, hosts.roster(), host)


def check_command(command: str, config: Config, worktree: Path, cwd: str | None) -> str | None:
    return judge.check_command(command, config, worktree, cwd, hosts.roster())


def check_path(raw: str, config: Config, worktree: Path, *, reading: bool = False) -> str | None:
    return judge.check_path(raw, config, worktree, hosts.roster(), reading=reading)
