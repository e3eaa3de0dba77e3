"""`python -m bench.ab run|report`: thin argument parsing over `runner` and `report`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .arms import ARMS
from .report import write_report
from .runner import DEFAULT_TASKS, RunPlan, run
from .tasks import TaskError
from .workdir import TrialSetupError

DEFAULT_MODEL = {"claude": "claude-sonnet-4-5", "codex": "gpt-5-codex"}


def _arms(text: str) -> tuple[str, ...]:
    names = tuple(a.strip() for a in text.split(",") if a.strip())
    unknown = [a for a in names if a not in ARMS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown arm {', '.join(unknown) or '(none)'}; choose from {', '.join(ARMS)}"
        )
    return names


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="run every (task, arm, repetition) trial")
    go.add_argument("--tasks", type=Path, default=DEFAULT_TASKS, help="a folder of tasks")
    go.add_argument("--arms", type=_arms, default=tuple(ARMS), help="comma-separated")
    go.add_argument("--n", type=int, default=1, help="repetitions of each (task, arm)")
    go.add_argument("--host", choices=("claude", "codex"), default="claude")
    go.add_argument("--model", default=None, help="the implementer's model, the same in every arm")
    go.add_argument("--budget", type=float, default=None, help="USD per trial (default: the task's)")
    go.add_argument("--time-cap", type=float, default=None, help="seconds per trial (default: the task's)")
    go.add_argument("--out", type=Path, default=None, help="the run's folder (default: bench/results/ab-<time>)")
    go.add_argument("--only", default="", help="comma-separated task names to run (default: all)")
    go.add_argument("--scratch", type=Path, default=None, help="where the trials' work trees go (default: a new temp folder)")
    show = sub.add_parser("report", help="print the table, write summary.json and report.html")
    show.add_argument("run_dir", type=Path)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "report":
            print(write_report(args.run_dir))
            return 0
        plan = RunPlan(
            tasks=args.tasks,
            arms=args.arms,
            n=max(1, args.n),
            host=args.host,
            model=args.model or DEFAULT_MODEL[args.host],
            budget_usd=args.budget,
            time_cap_s=args.time_cap,
            only=tuple(t for t in args.only.split(",") if t),
            scratch=args.scratch,
        )
        out = run(plan, args.out, os.environ, progress=lambda line: print(line, file=sys.stderr))
        print(write_report(out))
        return 0
    except (TaskError, TrialSetupError, FileNotFoundError) as exc:
        print(f"bench.ab: {exc}", file=sys.stderr)
        return 1
