"""`autopilot-codex`: parse, dispatch, print. The work is done in `commands/<verb>.py`; hooks go
through the gate and `hookrun`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__, hosts, output
from .config import Config, check
from .defaults import BUDGET_USD, MAX_ITERATIONS, REVIEW_MODE, REVIEW_MODES
from .errors import BridgeError, os_problem, permission_denied

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
    status.add_argument("--args-stdin", action="store_true", help=ARGS_STDIN)

    sub.add_parser("next", help="print the current task contract")

    stop = sub.add_parser("stop", help="stop the loop now; the hooks become no-ops")
    stop.add_argument("reason", nargs="*", help="why, kept in the state")
    stop.add_argument("--args-stdin", action="store_true", help=ARGS_STDIN)

    _resume_parser(sub)
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
    _other_parsers(sub)
    _login_parsers(sub)
    from .commands.views import add_parsers

    add_parsers(sub)
    # No help=: the hosts' verb, kept out of the user's list of commands.
    hook = sub.add_parser("hook", description="answer a host hook (reads the payload on stdin)")
    hook.add_argument("event", help="the hook event, e.g. Stop")
    hook.add_argument(
        "--host", default="claude", help="the host whose dialect to answer in (default: claude)"
    )
    return parser


ARGS_STDIN = "read the arguments as one line from stdin (slash commands use this)"
REQUIRE_WALL = "refuse to start unless the host's sandbox walls the implementer in"
MAX_TOKENS_HELP = "stop when the implementer has used this many tokens (0 = no cap)"
MAX_DURATION_HELP = "stop after this much wall time since the start: 2h, 90m, 1h30m (0 = none)"
CHECK_HELP = "a command of yours the bridge runs before it believes done (repeat for more)"


def _resume_parser(sub: Any) -> None:
    resume = sub.add_parser(
        "resume", help="resume a paused or stopped loop, or give a running one new caps"
    )
    resume.add_argument(
        "--budget", default=None, metavar="USD", help="the new USD cap (default: unchanged)"
    )
    resume.add_argument(
        "--max-iterations",
        default=None,
        metavar="N",
        help="the new iteration cap (default: unchanged)",
    )
    resume.add_argument("--max-tokens", default=None, metavar="N", help=MAX_TOKENS_HELP)
    resume.add_argument("--max-duration", default=None, metavar="TIME", help=MAX_DURATION_HELP)
    resume.add_argument("--session-id", default=None, help="the host session that owns the loop")
    resume.add_argument("--args-stdin", action="store_true", help=ARGS_STDIN)


def _other_parsers(sub: Any) -> None:
    """Host installs, the sibling styles (ralph, rounds) and the consultation."""
    for verb in ("install", "uninstall"):
        host = sub.add_parser(verb, help=f"{verb} the loop's hooks and skills for a host")
        host.add_argument("words", nargs=argparse.REMAINDER, help="codex [--user|--project]")

    ralph = sub.add_parser("ralph", help="feed one prompt back at every Stop until a promise")
    # `goal`, so words the parser does not know join the prompt as they join a plan's goal.
    ralph.add_argument("goal", nargs="*", metavar="prompt", help="the prompt fed back each time")
    ralph.add_argument("--prompt-file", default=None, help="read the prompt from this file")
    ralph.add_argument(
        "--max-iterations", default=None, help="cap (default 50; 0 = none, needs --budget)"
    )
    ralph.add_argument("--completion-promise", default=None, help="the text that ends the loop")
    ralph.add_argument(
        "--budget", default=None, help="USD cap on the implementer's spend (positive, finite)"
    )
    ralph.add_argument("--max-tokens", default=None, metavar="N", help=MAX_TOKENS_HELP)
    ralph.add_argument("--max-duration", default=None, metavar="TIME", help=MAX_DURATION_HELP)
    ralph.add_argument("--session-id", default=None, help="the host session that owns the loop")
    ralph.add_argument("--host", choices=hosts.HOSTS.names, default="claude")
    ralph.add_argument("--check", action="append", default=None, metavar="CMD", help=CHECK_HELP)
    ralph.add_argument("--require-wall", action="store_true", help=REQUIRE_WALL)
    ralph.add_argument("--args-stdin", action="store_true")

    cancel = sub.add_parser("cancel", help="cancel the ralph loop now")
    cancel.add_argument("--args-stdin", action="store_true")

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
    plan.add_argument(
        "--budget",
        default=None,
        metavar="USD",
        help=f"USD the manager and the implementer may spend together (default: {BUDGET_USD:.2f})",
    )
    plan.add_argument("--max-tokens", default=None, metavar="N", help=MAX_TOKENS_HELP)
    plan.add_argument("--max-duration", default=None, metavar="TIME", help=MAX_DURATION_HELP)
    plan.add_argument(
        "--max-iterations",
        default=None,
        metavar="N",
        help=f"Stop verdicts before the loop stops (default: {MAX_ITERATIONS})",
    )
    plan.add_argument("--model", default=None, help=f"the manager model (default: {Config.model})")
    plan.add_argument(
        "--review",
        choices=REVIEW_MODES,
        default=None,
        help=f"when the manager reviews the diff (default: {REVIEW_MODE})",
    )
    plan.add_argument("--check", action="append", default=None, metavar="CMD", help=CHECK_HELP)
    plan.add_argument("--session-id", default=None, help="the host session that owns the loop")
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
    plan.add_argument("--args-stdin", action="store_true", help=ARGS_STDIN)


def main(argv: Sequence[str] | None = None) -> int:
    """The one error handler: what the user must fix → 1, Ctrl-C → 130, a bug → 3, never a
    raw traceback (it goes to bridge.log)."""
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        if _verb(words) == "run":
            return _rounds(words)
        args = _parse(words)
        from .commands import read_in

        read_in(args.reader)
        if args.command == "hook":
            return _hook(args.event, args.host)
        if args.command in ("install", "uninstall"):
            from .commands.install import main as host_install

            # The global -C names the repository (for --project, and the wall's worktree)
            # unless the host's own -C does.
            where = ["-C", args.cwd] if args.cwd and "-C" not in args.words else []
            return host_install([args.command, *args.words, *where])
        code, text = _run(args, args.cwd or os.getcwd())
    except BridgeError as exc:
        output.out(f"autopilot-codex: {exc}")
        return 1
    except PermissionError as exc:
        output.out(f"autopilot-codex: {permission_denied(exc.filename or exc)}")
        return 1
    except OSError as exc:
        problem = os_problem(exc)
        if problem is None:
            return _internal_error(exc)
        output.out(f"autopilot-codex: {problem}")
        return 1
    except KeyboardInterrupt:
        output.err("autopilot-codex: interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, then the log
        return _internal_error(exc)
    output.out(text)
    return code


def _internal_error(exc: Exception) -> int:
    from .crashlog import log_crash

    log = log_crash("command")
    output.err(f"autopilot-codex: internal error ({type(exc).__name__}: {exc}); details in {log}")
    return 3


def _parse(words: list[str]) -> argparse.Namespace:
    cli = parser()
    _refuse_unknown_verb(cli, _verb(words))
    args, unknown = cli.parse_known_args(words)
    args.stdin_text = None
    if getattr(args, "args_stdin", False):
        words = [*words, *_split(sys.stdin.read())]
        args, unknown = cli.parse_known_args(words)
        args.stdin_text = None
    elif getattr(args, "goal", None) == ["-"]:
        args.stdin_text = sys.stdin.read()
    # Words the parser does not know belong to the goal or reason ("fix the --verbose flag"),
    # unless they are a misspelt option, which would leave its default silently in force.
    for name in ("goal", "reason", "question"):
        if hasattr(args, name):
            if name == "goal":
                _refuse_near_misses(unknown)
                args.goal = _goal_as_typed(words, args.command, args.goal, unknown)
            else:
                setattr(args, name, [*getattr(args, name), *unknown])
            unknown = []
    if unknown:
        cli.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


PLAN_OPTIONS = (
    "--budget",
    "--require-wall",
    "--max-iterations",
    "--model",
    "--review",
    "--check",
    "--session-id",
    "--goal-file",
    "--args-stdin",
    "--json",
    "--stash",
    "--include-dirty",
)


def _refuse_unknown_verb(cli: argparse.ArgumentParser, verb: str) -> None:
    """`stauts`: one line with the command meant, not argparse's list of every choice."""
    import difflib

    verbs = [
        name
        for action in cli._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]
    if not verb or verb.startswith("-") or verb in verbs:
        return
    close = difflib.get_close_matches(verb, verbs, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    raise BridgeError(f"unknown command {verb!r}: {hint}(`autopilot-codex --help` lists them)")


def _goal_as_typed(words: list[str], verb: str, goal: list[str], extra: list[str]) -> list[str]:
    """The goal's words in the order typed, with the option-like words argparse did not know
    kept where they stood ("--verbose flag should work"); refused when an option stands
    inside the goal, where it would take the goal's next word as its value."""
    start = words.index(verb) + 1 if verb in words else 0
    end = words.index("--", start) if "--" in words[start:] else len(words)
    merged: list[str] = []
    where: list[int] = []
    g = e = 0
    for i in range(start, len(words)):
        if g < len(goal) and words[i] == goal[g]:
            g += 1
        elif e < len(extra) and words[i] == extra[e]:
            e += 1
        else:
            continue
        merged.append(words[i])
        where.append(i)
    if where:
        taken = set(where)
        for i in range(where[0] + 1, min(where[-1], end)):
            if i not in taken and words[i].startswith("-") and words[i] != "-":
                raise BridgeError(
                    f"{words[i]} stands inside the goal and would take a word of it; put "
                    f"options before or after the goal, or -- before a goal that contains it"
                )
    return [*merged, *goal[g:], *extra[e:]]


def _refuse_near_misses(words: list[str]) -> None:
    import difflib

    for word in words:
        if not word.startswith("-") or word == "-":
            continue
        close = difflib.get_close_matches(word.split("=", 1)[0], PLAN_OPTIONS, n=1, cutoff=0.75)
        if close:
            raise BridgeError(
                f"unknown option {word}: did you mean {close[0]}? "
                "(put -- before a goal that really starts with dashes)"
            )


def _run(args: argparse.Namespace, cwd: str) -> tuple[int, str]:
    """One small function per verb: typed values in, one command called, its exit code and
    text out."""
    given = getattr(args, "session_id", None)
    # `jq -r` prints a missing id as "null": that is no session, never one named "null".
    given = None if given is None or given.strip() in ("", "null", "undefined") else given
    session = given or _host_session()[1]
    return VERBS[args.command](args, cwd, session)


Verb = Callable[[argparse.Namespace, str, "str | None"], "tuple[int, str]"]


def _plan(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.plan import plan, read_goal

    overrides = {
        "budget_usd": args.budget,
        "max_iterations": args.max_iterations,
        "max_tokens": args.max_tokens,
        "max_duration": args.max_duration,
        "model": args.model,
        "review": args.review,
        "checks": None if args.check is None else tuple(args.check),
    }
    goal = read_goal(args.goal, args.goal_file, cwd, args.stdin_text)
    return 0, plan(
        cwd=cwd,
        goal=goal,
        overrides=overrides,
        session_id=session,
        host=_host_session()[0] or args.reader or "claude",
        require_wall=args.require_wall,
        dirty=args.dirty,
    )


def _status(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.status import status

    return 0, status(cwd=cwd, as_json=args.json)


def _next(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.next import next_task

    return 0, next_task(cwd=cwd)


def _stop(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.stop import stop

    return 0, stop(cwd=cwd, reason=" ".join(args.reason))


def _resume(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.resume import resume

    return 0, resume(
        cwd=cwd,
        budget_usd=args.budget,
        max_iterations=args.max_iterations,
        session_id=session,
        max_tokens=args.max_tokens,
        max_duration=args.max_duration,
    )


def _doctor(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.doctor import render, run_checks

    written = ""
    if args.wall:
        from .commands import worktree_of
        from .commands.wall_install import wall_install

        written = wall_install(worktree_of(cwd)) + "\n\n"
    checks = run_checks(cwd, probe=args.probe)
    return (0 if all(c.ok for c in checks) else 1), written + render(checks)


def _ralph(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.ralph import parse_cap, ralph

    budget = args.budget
    return 0, ralph(
        cwd=cwd,
        prompt=" ".join(args.goal),
        prompt_file=args.prompt_file,
        max_iterations=parse_cap(args.max_iterations),
        completion_promise=args.completion_promise,
        budget_usd=None if budget is None else check("budget_usd", budget, f"--budget {budget}"),
        caps={"max_tokens": args.max_tokens, "max_duration": args.max_duration},
        session_id=session,
        host=args.host,
        checks=args.check,
        require_wall=args.require_wall,
    )


def _cancel(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.cancel import cancel

    return 0, cancel(cwd=cwd)


def _ask(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    if args.costs:
        from .commands.ask_costs import costs

        return 0, costs(cwd=cwd)
    from .commands.ask import ask

    words = " ".join(args.question)
    question = sys.stdin.read() if words.strip() == "-" else words
    return 0, ask(cwd=cwd, question=question, session_id=session)


def _login(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.login import login, login_status

    if args.status:
        return 0, login_status()
    return 0, login(
        from_env=args.from_env,
        from_stdin=args.source == "-",
        base_url=args.base_url,
        organization=args.org,
    )


def _logout(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.login import logout

    return 0, logout()


VERBS: dict[str, Verb] = {
    "plan": _plan,
    "status": _status,
    "next": _next,
    "stop": _stop,
    "resume": _resume,
    "doctor": _doctor,
    "ralph": _ralph,
    "cancel": _cancel,
    "ask": _ask,
    "login": _login,
    "logout": _logout,
}


def _completion(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.views import completion

    return 0, completion(args.shell, parser())


def _register_views() -> None:
    """report, logs, loops and completion, and `--json` on plan, ask and doctor."""
    from .commands.views import VIEWS, as_json_of

    VERBS.update(VIEWS, completion=_completion)
    for name in ("plan", "ask", "doctor"):
        VERBS[name] = as_json_of(name, VERBS[name])


_register_views()


def _host_session() -> tuple[str, str | None]:
    """(host, session) when a host's agent runs this command from its shell tool."""
    for host in hosts.every():
        session = os.environ.get(host.session_env, "").strip() if host.session_env else ""
        if session:
            return host.name, session
    return "", None


def _hook(event: str, host: str) -> int:
    """The same path the launcher takes: gate first, then the engine."""
    from .gate import hook_main

    return hook_main([event, "--host", host])


def _verb(words: list[str]) -> str:
    """The verb, skipping `-C DIR`; `run` is parsed by the driver, which owns its options."""
    rest = words[2:] if words[:1] == ["-C"] else words
    return rest[0] if rest else ""


def _rounds(words: list[str]) -> int:
    from .commands.run import main as run_main

    cwd = words[1] if words[:1] == ["-C"] else None
    rest = words[words.index("run") + 1 :]
    return run_main([*rest, "--cwd", cwd] if cwd is not None else rest)


def _split(text: str) -> list[str]:
    """Slash-command arguments as the user typed them; unbalanced quotes fall back to words."""
    text = text.strip()
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
