"""`install <host>` / `uninstall <host>`: a host's hooks, skills and trust, for the hosts whose
hooks the bridge writes itself (`Host.installer`). Claude Code installs through its own plugin
command (the launcher's `install`), which then hands over here as `install claude`: the
launcher on PATH, the wall, then doctor; `uninstall claude` takes back each of them and the
plugin."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import defaults, hosts, output, searchpath
from ..errors import BridgeError
from ..paths import find_worktree
from .doctor import Check, render, run_checks
from .oneline import OneLineParser, listed, one_of
from .onpath import put_on_path, take_off_path

# The default host, whose plugin the launcher adds itself (`install [claude]`: its own plugin
# install); the bridge's part is the launcher on PATH, the wall and doctor.
PLUGIN_HOST = defaults.HOST
PLUGIN = "autopilot-codex@autopilot-codex"


def installable() -> tuple[str, ...]:
    """The registered hosts that have an installer: this verb's choices."""
    return tuple(n for n in hosts.HOSTS if hosts.get(n).installer() is not None)


def parser(action: str) -> argparse.ArgumentParser:
    """`action` is install or uninstall: the verb its one-line errors name."""
    choices = (PLUGIN_HOST, *installable())
    p = OneLineParser(
        prog=f"autopilot-codex {action}",
        description=f"{action.capitalize()} the loop's hooks and skills for {listed(choices)}.",
    )
    p.add_argument("host", nargs="?", type=one_of(*choices), help=listed(choices))
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
    action, *words = argv
    cli = parser(action)
    args = cli.parse_args(words)
    if args.host is None:
        cli.error(f"name the host: {listed((PLUGIN_HOST, *installable()))}")
    environ = os.environ if env is None else env
    if args.host == PLUGIN_HOST and action == "install":
        return _claude(args, environ)
    cwd = Path(args.cwd or os.getcwd())
    try:
        if args.host == PLUGIN_HOST:
            return _uninstall_claude(environ)
        installer = hosts.get(args.host).installer()
        assert installer is not None  # the parser's choices hold only hosts with one
        if action == "install":
            lines = installer.install(args.scope, environ, cwd)
            lines += _host_wall(args.host, cwd, environ, unguarded=args.unguarded)
            lines.append(put_on_path(environ))
        else:
            lines = installer.uninstall(args.scope, environ, cwd)
    except BridgeError as exc:
        output.out(f"autopilot-codex: {exc}")
        return 1
    except OSError as exc:
        output.out(f"autopilot-codex: {action} {args.host} failed: {exc}")
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
    from .guard_install import guard_lines

    cwd = args.cwd or os.getcwd()
    guarded = guard_lines(args.host, cwd, environ, unguarded=args.unguarded)
    lines = [f"autopilot-codex: added to Claude Code.\n{put_on_path(environ)}\n", *guarded]
    checks = run_checks(cwd, probe=args.probe, wall_at=Path(cwd))
    if not args.unguarded and find_worktree(cwd) is None:
        checks = _everywhere(checks, Path(cwd))
    output.out("\n".join(lines) + render(checks))
    return 0 if all(c.ok for c in checks) else 1


def _everywhere(checks: list[Check], cwd: Path) -> list[Check]:
    """Outside a repository no repository's own paths can be named: doctor, judging this folder
    as one, finds its `.git/config` open. When those are all the wall lacks, it is in place for
    every repository (a repository's paths join at its first plan), and says so."""
    from ..hostwall import host_wall

    head = f"wall ({hosts.label(PLUGIN_HOST)}): "
    if any(str(cwd) not in piece for piece in host_wall(PLUGIN_HOST, cwd).missing):
        return checks
    line = (
        f"{head}in place for every repository; a repository's own paths join it at its first plan"
    )
    return [Check(True, line) if c.text.startswith(head) else c for c in checks]


def _uninstall_claude(environ: Mapping[str, str]) -> int:
    """What `install` did, taken back a step a line: the wall's entries in the user's settings
    (and the choice of it), the link on PATH, then the plugin through Claude Code's own command."""
    from .wall_install import consent

    boundary = hosts.get(PLUGIN_HOST).boundary()
    assert boundary is not None  # the plugin's host walls its implementer
    steps = boundary.unwall()
    with contextlib.suppress(FileNotFoundError):
        consent().unlink()
    steps.append(take_off_path(environ))
    removed, failed, plugin = _plugin_off(environ)
    head = "uninstalled from Claude Code" + ("" if removed else ", all but the plugin (below)")
    output.out("\n".join([f"autopilot-codex: {head}; your own settings are kept.", *steps, plugin]))
    return 1 if failed else 0


def _plugin_off(environ: Mapping[str, str]) -> tuple[bool, bool, str]:
    """(removed, failed, the line): the plugin removed by `claude`, or the command to run."""
    command = f"claude plugin uninstall {PLUGIN}"
    claude = searchpath.which("claude", environ.get("PATH", ""))
    if claude is None:
        return (
            False,
            False,
            f"  plugin: `claude` is not on PATH; remove the plugin with `{command}`",
        )
    ran = subprocess.run(
        [claude, "plugin", "uninstall", PLUGIN],
        capture_output=True,
        text=True,
        env=dict(environ),
        timeout=120,
        check=False,
    )
    if ran.returncode == 0:
        return True, False, f"  plugin: removed from Claude Code (`{command}`)"
    said = (ran.stderr.strip() or ran.stdout.strip() or "no output").splitlines()[-1]
    return False, True, f"  plugin: `{command}` failed (exit {ran.returncode}): {said}"
