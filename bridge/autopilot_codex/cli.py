"""`autopilot-codex`: parse, dispatch, print. The work is done in `commands/<verb>.py`; hooks go
through the gate and `hookrun`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import defaults, hosts, output
from . import styles as _styles  # noqa: F401 - registers each style's record before a load
from .cli_parser import parser
from .config import flag
from .errors import BridgeError, UsageError, os_problem, permission_denied

if TYPE_CHECKING:
    from .commands import Verb

__all__ = ["main", "parser"]


def main(argv: Sequence[str] | None = None) -> int:
    """The one error handler: what the user must fix → 1 (a command given wrongly → 2),
    Ctrl-C → 130, a bug → 3, never a raw traceback (it goes to bridge.log)."""
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        if _verb(words) == "run":
            return _rounds(words)
        args = _parse(words)
        from .commands import read_in

        read_in(args.reader)
        if args.command == "hook":
            from .gate import hook_main

            # The same path the launcher takes: gate first, then the engine.
            return hook_main([args.event, "--host", args.host])
        if args.command in ("install", "uninstall"):
            from .commands.install import main as host_install

            # The global -C names the repository (for --project, and the wall's worktree)
            # unless the host's own -C does.
            where = ["-C", args.cwd] if args.cwd and "-C" not in args.words else []
            return host_install([args.command, *args.words, *where])
        code, text = _run(args, args.cwd or os.getcwd())
    except BridgeError as exc:
        output.out(f"autopilot-codex: {exc}")
        return 2 if isinstance(exc, UsageError) else 1
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
    # What a command prints quotes the loop's records, which hold the implementer's text:
    # `output.out` writes it `visible`.
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
                _refuse_near_misses(unknown, _long_options(cli, args.command))
                args.goal = _goal_as_typed(words, args.command, args.goal, unknown)
            else:
                setattr(args, name, [*getattr(args, name), *unknown])
            unknown = []
    if unknown:
        cli.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


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


def _long_options(cli: argparse.ArgumentParser, verb: str) -> list[str]:
    """Every long option `verb` takes: what a misspelt one is matched against."""
    (verbs,) = (a for a in cli._actions if isinstance(a, argparse._SubParsersAction))
    return [o for a in verbs.choices[verb]._actions for o in a.option_strings if o[1] == "-"]


def _refuse_near_misses(words: list[str], options: list[str]) -> None:
    import difflib

    for word in words:
        if not word.startswith("-") or word == "-":
            continue
        close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.75)
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
        host=_host_session()[0] or args.reader or defaults.HOST,
        require_wall=args.require_wall,
        dirty=args.dirty,
    )


def _status(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.status import status
    from .commands.views import with_lanes

    text = status(cwd=cwd, as_json=args.json)
    return 0, text if args.json else with_lanes(text, cwd)


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
    checks = run_checks(cwd, probe=args.probe, verbose=args.verbose or args.wall)
    return (0 if all(c.ok for c in checks) else 1), written + render(checks)


def _ralph(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from .commands.ralph import parse_cap, ralph

    return 0, ralph(
        cwd=cwd,
        prompt=" ".join(args.goal),
        prompt_file=args.prompt_file,
        max_iterations=parse_cap(args.max_iterations),
        completion_promise=args.completion_promise,
        budget_usd=flag("budget_usd", args.budget),
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
    return 0, ask(
        cwd=cwd, question=sys.stdin.read() if words.strip() == "-" else words, session_id=session
    )


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
    """report, logs, loops and completion, submit and worker, and `--json` on plan, ask and
    doctor."""
    from .commands.fleet import FLEET
    from .commands.restore import run as restore
    from .commands.views import VIEWS, as_json_of

    VERBS.update(VIEWS | FLEET, completion=_completion, restore=restore)
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


def _verb(words: list[str]) -> str:
    """The verb, skipping `-C DIR`; `run` is parsed by the driver, which owns its options."""
    rest = words[2:] if words[:1] == ["-C"] else words
    return rest[0] if rest else ""


def _rounds(words: list[str]) -> int:
    from .commands.run import main as run_main

    cwd = words[1] if words[:1] == ["-C"] else None
    rest = words[words.index("run") + 1 :]
    # First: after a `--` in `rest` it would be words of the goal, and the run would work here.
    return run_main(["--cwd", cwd, *rest] if cwd is not None else rest)


def _split(text: str) -> list[str]:
    """Slash-command arguments as the user typed them; unbalanced quotes fall back to words."""
    text = text.strip()
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
