"""The command line's grammar: every verb's options and help (argparse). `cli` parses with it
and dispatches; nothing here runs a command."""

from __future__ import annotations

import argparse
from typing import Any

from . import __version__, defaults, hosts
from .config import Config
from .defaults import BUDGET_USD, MAX_ITERATIONS, REVIEW_MODE, REVIEW_MODES

LAUNCHER_ONLY = """\
setup (through the launcher bin/autopilot-codex):
  install      build the Python environment, add the plugin to Claude Code, run doctor
  bootstrap    build or refresh the Python environment only
"""


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autopilot-codex",
        description="A supervised autonomous loop: an OpenAI manager plans, reviews and decides.",
        epilog=LAUNCHER_ONLY,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"autopilot-codex {__version__}")
    parser.add_argument("-C", dest="cwd", default=None, help="run as if started in this directory")
    parser.add_argument(
        "--from",
        dest="reader",
        default=None,
        metavar="HOST",
        help="name commands in messages as this host's slash commands (default: terminal commands)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _plan_parser(sub)
    status = sub.add_parser("status", help="show the loop's state")
    status.add_argument("--json", action="store_true", help="print state.json as it is")

    sub.add_parser("next", help="print the current task contract")

    stop = sub.add_parser("stop", help="stop the loop now; the hooks become no-ops")
    stop.add_argument("reason", nargs="*", help="why, kept in the state")

    resume = sub.add_parser(
        "resume", help="resume a paused or stopped loop, or give a running one new caps"
    )
    _caps(
        resume, "the new USD cap (default: unchanged)", "the new iteration cap (default: unchanged)"
    )
    doctor = sub.add_parser("doctor", help="check that everything a loop needs is in place")
    doctor.add_argument(
        "--probe",
        action="store_true",
        help="also send the manager one tiny strict-schema request (a paid call) and say "
        "whether the server honours the schema",
    )
    doctor.add_argument(
        "--wall",
        action="store_true",
        help="write the wall into your Claude Code settings (backed up first, shown) and print "
        "the lines for Codex's config.toml",
    )
    doctor.add_argument(
        "--verbose", action="store_true", help="name every missing piece of each host's wall"
    )
    _other_parsers(sub)
    _login_parsers(sub)
    from .commands.views import add_parsers

    add_parsers(sub)
    from .commands.restore import add_parser as add_restore

    add_restore(sub)
    from .commands.fleet import add_parsers as add_fleet

    add_fleet(sub)
    for verb in ("plan", "status", "stop", "resume", "ralph", "cancel"):
        sub.choices[verb].add_argument("--args-stdin", action="store_true", help=ARGS_STDIN)
    # No help=: the hosts' verb, kept out of the user's list of commands.
    hook = sub.add_parser("hook", description="answer a host hook (reads the payload on stdin)")
    hook.add_argument("event", help="the hook event, e.g. Stop")
    hook.add_argument(
        "--host",
        default=defaults.HOST,
        help=f"the host whose dialect to answer in (default: {defaults.HOST})",
    )
    return parser


# `--args-stdin`: how the slash commands pass the user's words (read as one line from stdin);
# the hosts' plumbing, not the user's, so kept out of --help and the completions.
ARGS_STDIN = argparse.SUPPRESS
REQUIRE_WALL = "refuse to start unless the host's sandbox walls the implementer in"
CHECK_HELP = "a command of yours the bridge runs before it believes done (repeat for more)"


def _caps(verb: Any, budget: str, iterations: str) -> None:
    """The caps of a verb that starts or resumes a loop, and the session that owns it."""
    verb.add_argument("--budget", default=None, metavar="USD", help=budget)
    verb.add_argument("--max-iterations", default=None, metavar="N", help=iterations)
    verb.add_argument(
        "--max-tokens",
        default=None,
        metavar="N",
        help="stop when the implementer has used this many tokens (0 = no cap)",
    )
    verb.add_argument(
        "--max-duration",
        default=None,
        metavar="TIME",
        help="stop after this much wall time since the start: 2h, 90m, 1h30m (0 = none)",
    )
    verb.add_argument("--session-id", default=None, help="the host session that owns the loop")


def _other_parsers(sub: Any) -> None:
    """Host installs, the sibling styles (ralph, rounds) and the consultation."""
    for verb in ("install", "uninstall"):
        host = sub.add_parser(verb, help=f"{verb} the loop's hooks and skills for a host")
        host.add_argument("words", nargs=argparse.REMAINDER, help="codex [--user|--project]")

    ralph = sub.add_parser("ralph", help="feed one prompt back at every Stop until a promise")
    # `goal`, so words the parser does not know join the prompt as they join a plan's goal.
    ralph.add_argument("goal", nargs="*", metavar="prompt", help="the prompt fed back each time")
    ralph.add_argument("--prompt-file", default=None, help="read the prompt from this file")
    ralph.add_argument("--completion-promise", default=None, help="the text that ends the loop")
    _caps(
        ralph,
        "USD cap on the implementer's spend (positive, finite)",
        "cap (default 50; 0 = none, needs --budget)",
    )
    ralph.add_argument(
        "--host",
        choices=hosts.HOSTS.names,
        default=defaults.HOST,
        help=f"the host whose session runs the loop (default: {defaults.HOST})",
    )
    ralph.add_argument("--check", action="append", default=None, metavar="CMD", help=CHECK_HELP)
    ralph.add_argument("--require-wall", action="store_true", help=REQUIRE_WALL)

    sub.add_parser("cancel", help="cancel the ralph loop now")

    # Parsed by `commands/run.py` itself (see `main`); listed here for --help.
    sub.add_parser("run", help="pursue a goal in rounds of fresh host processes", add_help=False)

    ask = sub.add_parser("ask", help="ask the manager one question about the current task")
    ask.add_argument("question", nargs="*", help="the question; `-` reads it from stdin")
    ask.add_argument("--costs", action="store_true", help="what each way of asking costs here")
    ask.add_argument("--session-id", default=None, help="the host session asking")


def _login_parsers(sub: Any) -> None:
    login = sub.add_parser(
        "login",
        help="store the manager's OpenAI key where only you (and not the implementer) can read it",
    )
    login.add_argument(
        "source", nargs="?", choices=("-",), default=None, help="- reads the key from stdin"
    )
    login.add_argument(
        "--from-env",
        action="store_true",
        help="take OPENAI_API_KEY (and OPENAI_BASE_URL, OPENAI_ORG_ID) from this environment",
    )
    login.add_argument("--base-url", default=None, help="the manager's server (OPENAI_BASE_URL)")
    login.add_argument("--org", default=None, help="the OpenAI organization (OPENAI_ORG_ID)")
    login.add_argument(
        "--status", action="store_true", help="say where the key is kept and whether it is set"
    )
    sub.add_parser("logout", help="remove the stored key")


def _plan_parser(sub: Any) -> None:
    plan = sub.add_parser(
        "plan",
        help="plan a goal and start the loop",
        description="Plan a goal and start the loop. Words that are not options form the goal; "
        "put -- before a goal that starts with dashes.",
    )
    plan.add_argument("goal", nargs="*", help="what the loop should achieve; - reads it from stdin")
    plan.add_argument(
        "--goal-file", default=None, metavar="PATH", help="read the goal from this file"
    )
    _caps(
        plan,
        f"USD the manager and the implementer may spend together (default: {BUDGET_USD:.2f})",
        f"Stop verdicts before the loop stops (default: {MAX_ITERATIONS})",
    )
    plan.add_argument("--model", default=None, help=f"the manager model (default: {Config.model})")
    plan.add_argument(
        "--review",
        choices=REVIEW_MODES,
        default=None,
        help=f"when the manager reviews the diff (default: {REVIEW_MODE})",
    )
    plan.add_argument("--check", action="append", default=None, metavar="CMD", help=CHECK_HELP)
    plan.add_argument("--require-wall", action="store_true", help=REQUIRE_WALL)
    dirty = plan.add_mutually_exclusive_group()
    dirty.add_argument(
        "--stash",
        dest="dirty",
        action="store_const",
        const="stash",
        help="keep uncommitted work aside (git stash -u) and start from HEAD",
    )
    dirty.add_argument(
        "--include-dirty",
        dest="dirty",
        action="store_const",
        const="include",
        help="make uncommitted work part of the loop's review (default, with a note)",
    )
