"""`run`: pursue a goal in rounds of fresh host processes (the loop itself is `rounds.driver`).

`run` owns its options (the CLI hands it every word after the verb), so it has its own parser.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .. import defaults, hosts, loopfiles, output
from ..checks.evidence import user_checks
from ..closing import closing
from ..config import flag, load_config
from ..errors import BridgeError
from ..gitrepo import toplevel
from ..hostwall import HostWall
from ..manager import select
from ..output import terminal_command
from ..rounds.caps import Raise
from ..rounds.driver import ManagerCheck, RunOptions, custody_for, run
from ..rounds.runner import implementers
from ..rounds.view import make_view
from ..spend import of_files
from .doctor_jail import jail_notes
from .oneline import OneLineParser, one_of

# `--manager none`: no manager; a verifier's exit (and the checks) end the run.
NO_MANAGER = "none"
ROUNDS = 10


def _number(kind: type[int] | type[float], wanted: str) -> Callable[[str], Any]:
    def parse(text: str) -> int | float:
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not accepted; give {wanted}") from None

    return parse


def parser() -> argparse.ArgumentParser:
    managers = (*select.BACKENDS.names, NO_MANAGER)
    p = OneLineParser(
        prog="autopilot-codex run",
        description="Pursue a goal in rounds, each a fresh headless host process.",
    )
    p.add_argument("goal", nargs="*", help="the objective, as the user states it")
    p.add_argument(
        "--implementer",
        type=one_of(*implementers()),
        choices=implementers(),
        default=None,
        help="the host that implements (required, except with --resume)",
    )
    p.add_argument(
        "--rounds",
        type=_number(int, "a whole number of rounds, 1 or more"),
        default=None,
        help=f"counted rounds at most (default: {ROUNDS}; with --resume, the new limit)",
    )
    p.add_argument(
        "--manager",
        type=one_of(*managers),
        choices=managers,
        default=None,
        help=f"who judges each round (default: {NO_MANAGER}: a verifier's exit and the checks; "
        "with --resume, the run's own)",
    )
    p.add_argument("--resume", action="store_true", help="continue the last unfinished run")
    p.add_argument("--json", action="store_true", help="print the final record as JSON")
    p.add_argument(
        "--budget",
        default=None,
        metavar="USD",
        help="stop once the rounds and the manager have spent this many USD together "
        "(default: no limit; with --resume, the new limit)",
    )
    p.add_argument(
        "--max-tokens",
        default=None,
        metavar="N",
        help="stop once the rounds have used this many tokens (0 = no cap)",
    )
    p.add_argument(
        "--max-duration",
        default=None,
        metavar="TIME",
        help="stop this long after the run started: 2h, 90m, 1h30m (0 = none)",
    )
    p.add_argument(
        "--timeout",
        type=_number(float, "seconds, above 0"),
        default=3600.0,
        help="seconds per round (default: 3600)",
    )
    p.add_argument(
        "--no-progress-rounds",
        type=_number(int, "a whole number of rounds (0 turns this off)"),
        default=3,
        metavar="K",
        help="end the run after K rounds in a row that change nothing, or K equal failures "
        "(default 3; 0 turns this off)",
    )
    p.add_argument(
        "--host-arg",
        action="append",
        default=None,
        help="a flag for the host, replacing its default permission flags (repeat; "
        "--host-arg=--x); the wall's flags are always added, and a flag that would replace or "
        "loosen them is refused",
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
    p.add_argument(
        "--cwd", type=Path, default=Path(), help="the repository to run in (default: here)"
    )
    p.add_argument(
        "--lanes",
        type=_number(int, "a whole number of lanes, 1 or more"),
        default=None,
        metavar="N",
        help="plan with the manager, then run up to N independent tasks at once, each in a "
        "worktree of its own, merged one at a time (see docs/lanes.md)",
    )
    p.add_argument(
        "--lane-budget",
        default=None,
        metavar="USD",
        help="with --lanes: each lane's reservation (default: the budget left over the lanes)",
    )
    p.add_argument(
        "--lane-timeout",
        type=_number(float, "seconds, above 0"),
        default=None,
        metavar="SECONDS",
        help="with --lanes: stop a lane silent this long (default: --timeout plus a minute)",
    )
    return p


def _refuse_unknown(cli: argparse.ArgumentParser, unknown: list[str]) -> None:
    """An unknown option with the one meant (as `plan` does), never argparse's bare usage."""
    if not unknown:
        return
    import difflib

    known = [o for action in cli._actions for o in action.option_strings]
    word = unknown[0].split("=", 1)[0]
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.75)
    hint = f": did you mean {close[0]}?" if close else " (see run --help)"
    raise BridgeError(f"unknown option {word}{hint}")


def judge_wall(opts: RunOptions, require: bool) -> HostWall:
    """The wall the rounds run behind: the host's settings files with the boundary the driver
    passes to every round (`rounds.walled`) as the flag layer; refused with `require`."""
    from ..rounds.walled import round_wall
    from .plan import judge_wall as judge

    implementer = _implementer(opts)
    flag = round_wall(implementer, toplevel(opts.worktree), os.environ).layer()
    return judge(implementer, opts.worktree, require, flag=flag)


def wall_line(wall: HostWall) -> str:
    """The run's first line: whether the rounds are walled, in one line either way."""
    label = hosts.label(wall.host)
    if wall.walled:
        return f"Rounds: walled ({label}'s sandbox holds each round in)."
    how = "partly walled" if wall.level == "partly" else "no sandbox"
    line = (
        f"Rounds: UNGUARDED ({how}, {label}): the rails are a seatbelt, not a wall; missing: "
        f"{''.join(wall.missing[:1])}"
    )
    more = len(wall.missing) - 1
    return line + (
        f" and {more} more (`{terminal_command('doctor')} --verbose`)" if more > 0 else ""
    )


def _implementer(opts: RunOptions) -> str:
    """The run's host: a resumed run keeps the one it started with."""
    if not opts.resume:
        return opts.implementer
    runs, _ = custody_for(toplevel(opts.worktree)).open(resume=True)
    return runs[-1].header.implementer if runs else opts.implementer


def _options(args: argparse.Namespace) -> RunOptions:
    if args.rounds is not None and args.rounds < 1:
        raise BridgeError("--rounds must be 1 or more")
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise BridgeError(f"--timeout {args.timeout:g} is not accepted: it must be above 0")
    budget = flag("budget_usd", args.budget)
    if not args.resume and args.implementer is None:
        names = " or ".join(f"--implementer {n}" for n in implementers())
        raise BridgeError(f"choose the implementer: {names}")
    # A new run's token and time caps: the flags, then the environment, then the config file
    # (as ralph's); a resume raises only what its flags give.
    given = {"max_tokens": args.max_tokens, "max_duration": args.max_duration}
    config = load_config(given)
    raised = Raise()
    if args.resume:
        raised = Raise(
            rounds=args.rounds,
            budget_usd=budget,
            max_tokens=flag("max_tokens", args.max_tokens),
            max_seconds=flag("max_duration", args.max_duration),
            manager=args.manager,
        )
    return RunOptions(
        worktree=args.cwd.resolve(),
        goal=" ".join(args.goal),
        implementer=args.implementer or defaults.HOST,
        rounds=ROUNDS if args.rounds is None else args.rounds,
        resume=args.resume,
        budget_usd=budget,
        max_tokens=config.max_tokens,
        max_seconds=config.max_duration,
        raised=raised,
        manager=args.manager or NO_MANAGER,
        timeout_s=args.timeout,
        host_args=tuple(args.host_arg) if args.host_arg is not None else None,
        checks=tuple(user_checks(args.check)),
        checks_env=load_config(warnings=[]).checks_env,
        no_progress_rounds=max(0, args.no_progress_rounds),
    )


def _manager(given: str | None, opts: RunOptions) -> ManagerCheck | None:
    """The run's manager: the one given, else (resumed) the one the run kept, else none."""
    goal, backend = opts.goal, given
    if opts.resume:
        runs, _ = custody_for(toplevel(opts.worktree)).open(resume=True)
        if runs:
            goal, backend = runs[-1].header.goal, given or runs[-1].header.manager
    if not backend or backend == NO_MANAGER:
        return None
    from ..rounds.verdict import make

    return make(goal, backend)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    cli = parser()
    args, unknown = cli.parse_known_args(argv)
    out = stdout or sys.stdout
    try:
        _refuse_unknown(cli, unknown)
        from .run_lanes import lanes_wanted

        if lanes_wanted(args):
            from .run_lanes import implementer_of, run_lanes

            # The lanes' wall, judged once before any plan is paid for; each lane judges its
            # own worktree again (`--require-wall` is passed down).
            here = RunOptions(worktree=args.cwd.resolve(), implementer=implementer_of(args))
            output.err(wall_line(judge_wall(here, args.require_wall)))
            return run_lanes(args, out)
        opts = _options(args)
        for line in jail_notes():
            output.err(line)
        wall = judge_wall(opts, args.require_wall)
        output.err(wall_line(wall))
        opts = dataclasses.replace(opts, wall=wall.level, wall_missing=wall.missing)
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
        used = int(record["rounds_used"])
        line = (
            f"{when} {record['status']}: {record['why']} after {used} "
            f"{'round' if used == 1 else 'rounds'}; handoff {record['handoff']}"
        )
        # The one meter, as `status` reads it: the rollout's rounds, each marked where its
        # model was priced by rule ("~").
        spent = of_files(loopfiles.load(Path(record["rollout"]).parent.parent))
        out.write(closing(line, spent) + "\n")
    out.flush()
    return int(record["exit_code"])
