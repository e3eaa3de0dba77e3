"""The verbs that only look at loops (report, logs, loops) and `--json` on plan, ask and
doctor: their parsers and their small dispatch functions, kept apart from `cli`'s."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .. import loopfiles, output
from ..errors import BridgeError
from ..paths import project_dir

if TYPE_CHECKING:
    from . import Verb

JSON_HELP = "print the result as JSON, for scripts"


def add_parsers(sub: Any) -> None:
    report = sub.add_parser("report", help="write one HTML page of what the loop did")
    report.add_argument(
        "--out", default=None, metavar="FILE", help="where (default: beside the loop's state)"
    )
    report.add_argument("--open", action="store_true", help="open it in your browser")

    logs = sub.add_parser("logs", help="the loop's ledger as readable lines")
    logs.add_argument(
        "-f", "--follow", action="store_true", help="keep printing new lines (Ctrl-C ends)"
    )
    logs.add_argument("--json", action="store_true", help="one JSON object per line")
    logs.add_argument(
        "-n", dest="lines", type=int, default=None, metavar="N", help="only the last N lines"
    )
    logs.add_argument("--lanes", action="store_true", help="the lanes run's events here")
    logs.add_argument("--lane", default="", metavar="TASK", help="one lane's own log")

    loops = sub.add_parser("loops", help="every loop on this machine; --prune removes ended ones")
    loops.add_argument("--json", action="store_true", help=JSON_HELP)
    loops.add_argument("--prune", action="store_true", help="remove ended loops' folders")
    loops.add_argument(
        "--older-than",
        default="7d",
        metavar="AGE",
        help="with --prune: idle this long (default: 7d)",
    )
    loops.add_argument("--dry-run", action="store_true", help="with --prune: say what would go")
    loops.add_argument(
        "--yes", action="store_true", help="with --prune: remove snapshots without asking"
    )

    watch = sub.add_parser("watch", help="a live view of the loops; notices a silent one")
    watch.add_argument("--here", action="store_true", help="only this worktree's loop")
    watch.add_argument("--once", action="store_true", help="print one frame and exit")
    watch.add_argument("--json", action="store_true", help="print the rows as JSON and exit")
    watch.add_argument(
        "--silence",
        default="30m",
        metavar="AGE",
        help="a running loop with no sign of its session this long (no ledger event, no write to its transcript) is silent (default: 30m)",
    )
    watch.add_argument(
        "--every", type=float, default=2.0, metavar="S", help="seconds between frames"
    )

    completion = sub.add_parser("completion", help="print a shell completion script")
    from .completion import SHELLS

    completion.add_argument("shell", choices=SHELLS, help="bash, zsh or fish")
    for verb in ("plan", "ask", "doctor"):
        sub.choices[verb].add_argument("--json", action="store_true", help=JSON_HELP)


def report(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .report import report as write_report

    return 0, write_report(cwd=cwd, out=args.out, open_it=args.open)


def logs(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from . import worktree_of
    from .logs import NO_LANES, follow, lane_text, lanes_story, show
    from .logs import logs as read_logs

    if args.lane:
        return 0, lane_text(cwd, args.lane, args.lines)
    if args.lanes:
        return 0, lanes_story(cwd) or NO_LANES
    path = project_dir(worktree_of(cwd)) / loopfiles.EVENTS
    text, offset = read_logs(path, as_json=args.json, last=args.lines)
    if not args.follow:
        if not text and not args.json:
            return 0, lanes_story(cwd) or "The ledger is empty: no loop has run here yet."
        if args.json:
            return 0, text
        from ..spend import of_files

        # The loop's spend as every view shows it, under the ledger's lines.
        return 0, f"{text}\nSpent: {of_files(loopfiles.load(path.parent)).text()}"
    output.out(text)
    try:
        follow(path, lambda record: output.out(show(record, args.json)), offset=offset)
    except KeyboardInterrupt:
        return 130, ""
    return 0, ""


def loops(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .loops import as_json, every, prune, table

    if args.prune:
        if not args.dry_run and not args.yes:
            from .restore import confirm_prune

            confirm_prune(prune(args.older_than, dry_run=True, snapshots_only=True))
        return 0, prune(args.older_than, dry_run=args.dry_run)
    if args.dry_run:
        raise BridgeError("--dry-run goes with --prune: loops --prune --older-than 7d --dry-run")
    found = every()
    return 0, as_json(found) if args.json else with_lanes(table(found), cwd)


def with_lanes(text: str, cwd: str) -> str:
    """A view's text and, below it, the last lanes run of the repository here (if any) and,
    with a shared database, the fleet's runs."""
    from ..lanes.view import here, table
    from .fleet import fleet_lines

    return "\n".join([text, *here(cwd, table), *fleet_lines()])


def watch(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from . import worktree_of
    from .watch import watch as run_watch

    return 0, run_watch(
        once=args.once,
        as_json_out=args.json,
        silence=args.silence,
        here=str(worktree_of(cwd)) if args.here else None,
        every_s=max(0.2, args.every),
        cwd=cwd,
    )


def as_json_of(name: str, verb: Verb) -> Verb:
    """`--json` on a verb that prints text: the same call, then a record a script can read."""

    def run(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
        if not getattr(args, "json", False):
            return verb(args, cwd, session)
        if name == "doctor":
            return _doctor_json(args, cwd)
        code, text = verb(args, cwd, session)
        return code, json.dumps(_record(name, cwd, text), indent=1, sort_keys=True)

    return run


def _record(name: str, cwd: str, text: str) -> dict[str, Any]:
    from . import worktree_of

    files = loopfiles.load(project_dir(worktree_of(cwd)))
    if name == "ask":
        asked = [e for e in files.events if e.get("event") == "ask"]
        last = asked[-1] if asked else {}
        return {
            "answer": text,
            "cost_usd": loopfiles.number(last, "cost_usd"),
            "task": loopfiles.text(last, "task") or None,
            "budget_used_usd": loopfiles.number(files.state, "budget_used_usd"),
        }
    tasks = [
        {"id": loopfiles.text(t, "id"), "title": loopfiles.text(t, "title")}
        for t in loopfiles.items(files.plan, "tasks")
    ]
    return {
        "goal": files.goal,
        "status": files.status,
        "summary": loopfiles.text(files.plan, "summary"),
        "tasks": tasks,
        "current_task": files.state.get("current_task"),
        "budget_usd": loopfiles.number(files.state, "budget_usd"),
        "budget_used_usd": loopfiles.number(files.state, "budget_used_usd"),
        "wall": loopfiles.text(files.state, "wall"),
        "message": text,
    }


def _doctor_json(args: argparse.Namespace, cwd: str) -> tuple[int, str]:
    from .doctor import run_checks

    if args.wall:
        raise BridgeError("--wall writes your settings; run it without --json")
    checks = run_checks(cwd, probe=args.probe)
    ok = all(c.ok for c in checks)
    data = {"ok": ok, "checks": [{"ok": c.ok, "note": c.note, "text": c.text} for c in checks]}
    return (0 if ok else 1), json.dumps(data, indent=1, sort_keys=True)


def completion(shell: str, parser: argparse.ArgumentParser) -> str:
    from .completion import script, walk
    from .run import parser as run_parser

    top, verbs = walk(parser, {"run": run_parser()})
    return script(shell, top, verbs)


VIEWS: dict[str, Verb] = {"report": report, "logs": logs, "loops": loops, "watch": watch}
