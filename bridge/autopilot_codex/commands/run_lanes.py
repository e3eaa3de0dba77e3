"""`run --lanes N` (and `run --resume` of a lanes run): the flags into `lanes.driver`.

Without `--lanes`, `run` is the rounds loop as it always was; a lanes run needs a manager
(it plans, reviews each landing and writes follow-ups). A lanes run is durable (`lanes.flow`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from pathlib import Path
from typing import TextIO

from .. import defaults
from ..config import flag, load_config
from ..errors import BridgeError
from ..gitrepo import toplevel
from ..lanes.ask import for_backend
from ..lanes.driver import LanesOptions, home_of
from ..lanes.record import load
from ..rounds.walled import refuse_loosening

# A lane may be quiet for a whole round; past its round timeout and this much, it is stuck.
SILENCE_GRACE_S = 60.0


def lanes_wanted(args: argparse.Namespace) -> bool:
    """`--lanes`, or `--resume` where the last lanes run is unfinished."""
    if args.lanes is not None:
        return True
    if not args.resume:
        return False
    root = toplevel(args.cwd.resolve())
    if (last := load(home_of(root))) is not None:
        return last.status not in ("complete",)
    # A driver killed before it first wrote the run's file: the database knows the run.
    from ..durable import app

    if not app.database_exists():
        return False  # no database made here yet: nothing to load DBOS for
    from ..lanes import flow

    return flow.pending(root) is not None


def implementer_of(args: argparse.Namespace) -> str:
    """The lanes' host: a resumed run keeps the one it started with."""
    last = load(home_of(toplevel(args.cwd.resolve()))) if args.resume else None
    return last.implementer if last is not None else args.implementer or defaults.HOST


def options(args: argparse.Namespace) -> LanesOptions:
    if args.lanes is not None and args.lanes < 1:
        raise BridgeError("--lanes must be 1 or more")
    if args.rounds is not None and args.rounds < 1:
        raise BridgeError("--rounds must be 1 or more")
    # Refused here, before the plan is paid for, as each lane's run would refuse them.
    refuse_loosening(implementer_of(args), tuple(args.host_arg or ()))
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise BridgeError(f"--timeout {args.timeout:g} is not accepted: it must be above 0")
    if not args.resume and args.implementer is None:
        raise BridgeError("choose the implementer: --implementer claude or --implementer codex")
    budget_usd = flag("budget_usd", args.budget)
    lane_usd = flag("budget_usd", args.lane_budget, "--lane-budget")
    config = load_config({"max_tokens": args.max_tokens, "max_duration": args.max_duration})
    return LanesOptions(
        worktree=args.cwd.resolve(),
        goal=" ".join(args.goal),
        implementer=args.implementer or defaults.HOST,
        lanes=args.lanes or 1,
        lane_usd=lane_usd,
        budget_usd=budget_usd,
        max_tokens=config.max_tokens,
        max_seconds=config.max_duration,
        round_timeout_s=args.timeout,
        silent_s=args.lane_timeout or args.timeout + SILENCE_GRACE_S,
        checks=tuple(args.check or ()),
        checks_env=tuple(load_config(warnings=[]).checks_env),
        resume=args.resume,
        rounds=args.rounds or 0,
        host_args=tuple(args.host_arg or ()),
        require_wall=args.require_wall,
    )


def _pending_manager(root: Path) -> str | None:
    from ..lanes import flow

    found = flow.pending(root)
    return found[1].manager if found is not None else None


def run_lanes(args: argparse.Namespace, out: TextIO) -> int:
    opts = options(args)
    manager = args.manager
    if opts.resume and manager is None:
        root = toplevel(opts.worktree)
        last = load(home_of(root))
        manager = last.manager if last is not None else _pending_manager(root)
    for_backend(manager)  # refused here, before DBOS starts, when its backend cannot work
    from ..lanes import flow  # DBOS loads only for a lanes run

    record = flow.run(dataclasses.replace(opts, manager=manager or ""))
    if args.json:
        out.write(json.dumps(record, sort_keys=True) + "\n")
    else:
        for task in record["tasks"]:
            out.write(f"{task['id']}: {task['state']} ({task['why'] or task['title']})\n")
        out.write(f"{record['status']}: {record['why']}. {record['finish']}\n")
    out.flush()
    return int(record["exit_code"])
