"""`autopilot-codex`: parse, dispatch, print. The work is done in `commands/<verb>.py`; hooks go
through the gate and `hookrun`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence

from . import __version__, output
from .defaults import REVIEW_MODES
from .errors import BridgeError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autopilot-codex",
        description="A supervised autonomous loop: an OpenAI manager plans, reviews and decides.",
    )
    parser.add_argument("--version", action="version", version=f"autopilot-codex {__version__}")
    parser.add_argument("-C", dest="cwd", default=None, help="run as if started in this directory")
    sub = parser.add_subparsers(dest="command", required=True)

    plan = sub.add_parser("plan", help="plan a goal and start the loop")
    plan.add_argument("goal", nargs="*", help="what the loop should achieve")
    plan.add_argument("--budget", type=float, default=None, help="USD the manager may spend")
    plan.add_argument("--max-iterations", type=int, default=None)
    plan.add_argument("--model", default=None, help="the manager model")
    plan.add_argument("--review", choices=REVIEW_MODES, default=None)
    plan.add_argument("--session-id", default=None, help="the host session that owns the loop")
    plan.add_argument(
        "--args-stdin",
        action="store_true",
        help="read the goal and flags as one line from stdin (slash commands use this)",
    )

    status = sub.add_parser("status", help="show the loop's state")
    status.add_argument("--json", action="store_true", help="print state.json as it is")
    status.add_argument("--args-stdin", action="store_true")

    sub.add_parser("next", help="print the current task contract")

    stop = sub.add_parser("stop", help="stop the loop now; the hooks become no-ops")
    stop.add_argument("reason", nargs="*")
    stop.add_argument("--args-stdin", action="store_true")

    resume = sub.add_parser("resume", help="resume a paused or stopped loop")
    resume.add_argument("--budget", type=float, default=None)
    resume.add_argument("--max-iterations", type=int, default=None)
    resume.add_argument("--session-id", default=None)
    resume.add_argument("--args-stdin", action="store_true")

    sub.add_parser("doctor", help="check that everything a loop needs is in place")

    ask = sub.add_parser("ask", help="ask the manager one question about the current task")
    ask.add_argument("question", nargs="*", help="the question; `-` reads it from stdin")
    ask.add_argument("--costs", action="store_true", help="what each way of asking costs here")
    ask.add_argument("--session-id", default=None, help="the host session asking")

    hook = sub.add_parser("hook", help="answer a host hook (reads the payload on stdin)")
    hook.add_argument("event")
    hook.add_argument("--host", default="claude", help="the host whose dialect to answer in")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The one error handler: what the user must fix → 1, Ctrl-C → 130, a bug → 3, never a
    raw traceback (it goes to bridge.log)."""
    try:
        args = _parse(list(sys.argv[1:] if argv is None else argv))
        if args.command == "hook":
            return _hook(args.event, args.host)
        code, text = _run(args, args.cwd or os.getcwd())
    except BridgeError as exc:
        output.out(f"autopilot-codex: {exc}")
        return 1
    except KeyboardInterrupt:
        output.err("autopilot-codex: interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, then the log
        from .hookrun import log_crash

        log = log_crash("command")
        output.err(f"autopilot-codex: internal error ({type(exc).__name__}: {exc}); details in {log}")
        return 3
    output.out(text)
    return code


def _parse(words: list[str]) -> argparse.Namespace:
    parser = _parser()
    args, unknown = parser.parse_known_args(words)
    if getattr(args, "args_stdin", False):
        args, unknown = parser.parse_known_args([*words, *_split(sys.stdin.read())])
    # Words the parser does not know belong to the goal or reason ("fix the --verbose flag").
    for name in ("goal", "reason", "question"):
        if hasattr(args, name):
            setattr(args, name, [*getattr(args, name), *unknown])
            unknown = []
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _run(args: argparse.Namespace, cwd: str) -> tuple[int, str]:
    """One branch per verb: typed values in, one command function called, its text out."""
    session = getattr(args, "session_id", None) or os.environ.get("CLAUDE_CODE_SESSION_ID") or None
    if args.command == "plan":
        from .commands.plan import plan

        overrides = {
            "budget_usd": args.budget,
            "max_iterations": args.max_iterations,
            "model": args.model,
            "review": args.review,
        }
        return 0, plan(cwd=cwd, goal=" ".join(args.goal), overrides=overrides, session_id=session)
    if args.command == "status":
        from .commands.status import status

        return 0, status(cwd=cwd, as_json=args.json)
    if args.command == "next":
        from .commands.next import next_task

        return 0, next_task(cwd=cwd)
    if args.command == "stop":
        from .commands.stop import stop

        return 0, stop(cwd=cwd, reason=" ".join(args.reason))
    if args.command == "doctor":
        from .commands.doctor import render, run_checks

        checks = run_checks(cwd)
        return (0 if all(c.ok for c in checks) else 1), render(checks)
    if args.command == "ask":
        if args.costs:
            from .commands.ask_costs import costs

            return 0, costs(cwd=cwd)
        from .commands.ask import ask

        words = " ".join(args.question)
        question = sys.stdin.read() if words.strip() == "-" else words
        return 0, ask(cwd=cwd, question=question, session_id=session)
    from .commands.resume import resume

    return 0, resume(
        cwd=cwd, budget_usd=args.budget, max_iterations=args.max_iterations, session_id=session
    )


def _hook(event: str, host: str) -> int:
    """The same path the launcher takes: gate first, then the engine."""
    from .gate import hook_main

    return hook_main([event, "--host", host])


def _split(text: str) -> list[str]:
    """Slash-command arguments as the user typed them; unbalanced quotes fall back to words."""
    text = text.strip()
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
