"""`install codex` / `uninstall codex`: a host's hooks, skills and trust (Claude Code installs
through its own plugin command; see the launcher's `install`)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import codex_install, output
from ..errors import BridgeError

# The hosts this verb installs for: the ones whose hooks the bridge writes itself.
INSTALLABLE = ("codex",)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="autopilot-codex", description="Install the loop's hooks and skills for Codex."
    )
    p.add_argument("action", choices=("install", "uninstall"))
    p.add_argument("host", choices=INSTALLABLE)
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user")
    scope.add_argument("--project", dest="scope", action="store_const", const="project")
    p.add_argument("-C", dest="cwd", default=None, help="the repository for --project")
    p.set_defaults(scope="user")
    return p


def main(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """``install codex [--user|--project] [-C DIR]`` or ``uninstall codex [...]``."""
    args = parser().parse_args(list(argv))
    environ = os.environ if env is None else env
    try:
        tgt = codex_install.target(args.scope, env=environ, cwd=Path(args.cwd or os.getcwd()))
        if args.action == "install":
            lines = codex_install.install(tgt)
        else:
            lines = codex_install.uninstall(tgt)
    except BridgeError as exc:
        output.out(f"autopilot-codex: {exc}")
        return 1
    except OSError as exc:
        output.out(f"autopilot-codex: {args.action} codex failed: {exc}")
        return 1
    output.out("\n".join(lines))
    return 0
