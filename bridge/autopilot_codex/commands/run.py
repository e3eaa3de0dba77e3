"""`run`: pursue a goal in rounds of fresh host processes (the loop itself is `rounds.driver`).

`run` owns its options (the CLI hands it every word after the verb), so it has its own parser.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from .. import output
from ..config import load_config
from ..errors import BridgeError
from ..evidence import user_checks
from ..gitrepo import toplevel
from ..manager import select
from ..rounds.driver import ManagerCheck, RunOptions, custody_for, run
from ..rounds.runner import implementers
from ..rounds.view import make_view

# `--manager none`: no manager; a verifier's exit (and the checks) end the run.
NO_MANAGER = "none"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="autopilot-codex run",
        description="Pursue a goal in rounds, each a fresh headless host process.",
    )
    p.add_argument("goal", nargs="*", help="the objective, as the user states it")
    p.add_argument("--implementer", choices=implementers(), default=None)
    p.add_argument("--rounds", type=int, default=10, help="counted rounds at most (default 10)")
    p.add_argument("--manager", choices=(*select.BACKENDS.names, NO_MANAGER), default=NO_MANAGER)
    p.add_argument("--resume", action="store_true", help="continue the last unfinished run")
    p.add_argument("--json", action="store_true", help="print the final record as JSON")
    p.add_argument("--budget", type=float, default=None, help="stop once this many USD are spent")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per round")
    p.add_argument(
        "--no-progress-rounds",
        type=int,
        default=3,
        metavar="K",
        help="end the run after K rounds in a row that change nothing, or K equal failures "
        "(default 3; 0 turns this off)",
    )
    p.add_argument(
        "--host-arg",
        action="append",
        default=None,
        help="a flag for the host, replacing its default permission flags (repeat; --host-arg=--x)",
    )
    p.add_argument(
        "--check",
        action="append",
        default=None,
        metavar="CMD",
        help="a command of yours that must pass before a verifier's exit ends the run (repeat)",
    )
    p.add_argument(
        "--require-wall",
        action="store_true",
        help="refuse to start unless the implementer's sandbox walls it in",
    )
    p.add_argument("--cwd", type=Path, default=Path())
    return p


def judge_wall_text(opts: RunOptions, require: bool) -> str:
    """The wall the rounds run behind, said before the first round ("" when walled);
    refused with `require`.

    The rounds runner's own boundary layer (`--settings` / `-c`) is not passed here yet: the
    status is what the host's settings files give a round."""
    from ..guarded import headline
    from .plan import judge_wall

    wall = judge_wall(opts.implementer, opts.worktree, require)
    return "" if wall.walled else headline(wall)


def _options(args: argparse.Namespace) -> RunOptions:
    if args.rounds < 1:
        raise BridgeError("--rounds must be 1 or more")
    if not args.resume and args.implementer is None:
        names = " or ".join(f"--implementer {n}" for n in implementers())
        raise BridgeError(f"choose the implementer: {names}")
    return RunOptions(
        worktree=args.cwd.resolve(),
        goal=" ".join(args.goal),
        implementer=args.implementer or "claude",
        rounds=args.rounds,
        resume=args.resume,
        budget_usd=args.budget,
        timeout_s=args.timeout,
        host_args=tuple(args.host_arg) if args.host_arg is not None else None,
        checks=tuple(user_checks(args.check)),
        checks_env=load_config(warnings=[]).checks_env,
        no_progress_rounds=max(0, args.no_progress_rounds),
    )


def _manager(backend: str, opts: RunOptions) -> ManagerCheck | None:
    if backend == NO_MANAGER:
        return None
    from ..rounds.verdict import make

    goal = opts.goal
    if opts.resume:
        runs, _ = custody_for(toplevel(opts.worktree)).open(resume=True)
        goal = runs[-1].header.goal if runs else goal
    return make(goal, backend)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    args = parser().parse_args(argv)
    out = stdout or sys.stdout
    try:
        opts = _options(args)
        wall = judge_wall_text(opts, args.require_wall)
        if wall:
            output.err(wall)
        manager = _manager(args.manager, opts)
        record = run(opts, view=make_view(sys.stderr if args.json else out), manager=manager)
    except BridgeError as exc:
        output.err(f"autopilot-codex run: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    if args.json:
        out.write(json.dumps(record, sort_keys=True) + "\n")
    else:
        when = datetime.now(timezone.utc).strftime("%H:%M:%S")
        out.write(
            f"{when} {record['status']}: {record['why']} after {record['rounds_used']} rounds "
            f"(${record['cost_usd']:.2f}); handoff {record['handoff']}\n"
        )
    out.flush()
    return int(record["exit_code"])
