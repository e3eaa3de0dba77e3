"""`install <host>` / `uninstall <host>`: a host's hooks, skills and trust, for the hosts whose
hooks the bridge writes itself (`Host.installer`). Claude Code installs through its own plugin
command (the launcher's `install`), which then hands over here as `install claude`: the
launcher on PATH, then doctor."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import defaults, hosts, output
from ..errors import BridgeError
from .onpath import put_on_path

# The default host, whose plugin the launcher adds itself (`install [claude]`: its own plugin
# install); the bridge's part is the launcher on PATH, the wall and doctor.
PLUGIN_HOST = defaults.HOST


def installable() -> tuple[str, ...]:
    """The registered hosts that have an installer: this verb's choices."""
    return tuple(n for n in hosts.HOSTS if hosts.get(n).installer() is not None)


def parser() -> argparse.ArgumentParser:
    choices = installable()
    p = argparse.ArgumentParser(
        prog="autopilot-codex",
        description=f"Install the loop's hooks and skills for {' or '.join(choices)}.",
    )
    p.add_argument("action", choices=("install", "uninstall"))
    p.add_argument("host", choices=(*choices, PLUGIN_HOST))
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user")
    scope.add_argument("--project", dest="scope", action="store_const", const="project")
    p.add_argument("-C", dest="cwd", default=None, help="the repository for --project")
    p.add_argument("--probe", action="store_true", help="install claude: doctor --probe")
    guard = p.add_mutually_exclusive_group()
    # The wall is the default now; --wall stays accepted for the commands people wrote down.
    guard.add_argument("--wall", action="store_true", help="the default: write the wall")
    guard.add_argument(
        "--unguarded",
        action="store_true",
        help="write no wall into the host's settings (loops run with the rails only)",
    )
    p.set_defaults(scope="user")
    return p


def main(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """``install <host> [--user|--project] [-C DIR]`` or ``uninstall <host> [...]``."""
    args = parser().parse_args(list(argv))
    environ = os.environ if env is None else env
    if args.host == PLUGIN_HOST:
        return _claude(args, environ)
    installer = hosts.get(args.host).installer()
    assert installer is not None  # the parser's choices hold only hosts with one
    cwd = Path(args.cwd or os.getcwd())
    try:
        if args.action == "install":
            lines = installer.install(args.scope, environ, cwd)
            lines += _host_wall(args.host, cwd, environ, unguarded=args.unguarded)
            lines.append(put_on_path(environ))
        else:
            lines = installer.uninstall(args.scope, environ, cwd)
    except BridgeError as exc:
        output.out(f"autopilot-codex: {exc}")
        return 1
    except OSError as exc:
        output.out(f"autopilot-codex: {args.action} {args.host} failed: {exc}")
        return 1
    output.out("\n".join(lines))
    return 0


def _host_wall(host: str, cwd: Path, environ: Mapping[str, str], *, unguarded: bool) -> list[str]:
    """What the host's own config needs for the wall, unless the user said --unguarded
    (issue 33). Codex is the one host with an installer: its lines are printed, not written.
    Its profile names one repository as writable, and `$CODEX_HOME/config.toml` applies to
    every Codex session: written there, it would keep every other repository read-only."""
    if unguarded:
        return ["  wall: none (--unguarded): loops here run with the rails only"]
    from ..paths import find_worktree
    from .wall_install import user_wall

    worktree = find_worktree(cwd)
    if worktree is None:
        return [
            "  wall: run `autopilot-codex doctor --wall` inside the repository you will loop "
            "in: it prints the lines for Codex's config.toml (they name that repository)"
        ]
    return ["", *user_wall(host, worktree, environ)]


def _claude(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """After the launcher added the plugin to Claude Code: the launcher on PATH, the wall and
    the manager's key out of the implementer's environment (unless --unguarded), then doctor
    (whose exit code this is)."""
    if args.action != "install":
        output.out(
            "autopilot-codex: remove the plugin with `claude plugin uninstall "
            "autopilot-codex@autopilot-codex`"
        )
        return 1
    from .doctor import render, run_checks
    from .guard_install import guard_lines

    cwd = args.cwd or os.getcwd()
    guarded = guard_lines(args.host, cwd, environ, unguarded=args.unguarded)
    lines = [f"autopilot-codex: added to Claude Code.\n{put_on_path(environ)}\n", *guarded]
    checks = run_checks(cwd, probe=args.probe)
    output.out("\n".join(lines) + render(checks))
    return 0 if all(c.ok for c in checks) else 1
