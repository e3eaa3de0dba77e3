"""`autopilot-codex run`: the loop over rounds, each a fresh host process.

The driver owns the loop (the rounds' own Stop hooks never block: owner policy `driver`, told
by the environment below), so the host sessions keep the safety rails while the protocol —
markers, the git check of a verifier, retries, the wrap-up round, the budget — lives here.
Exit codes: complete 0, round limit or budget 2, error 1, interrupted 130.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .. import output
from ..checks import CheckResult, CheckSpec, failure_reason, passed, run_checks, status_line
from ..errors import BridgeError
from ..evidence import user_checks
from ..gitrepo import head_sha, toplevel
from . import rollout
from .decide import MAX_RETRIES, Next, Progress, RoundFacts, decide, first
from .handoff import WORKSPACE, Handoff, prepare, write_handoff
from .hold import hold, refuse_if_running
from .markers import Markers, parse, strip
from .prompts import round_prompt
from .runner import HOSTS, RoundResult, run_round
from .tree import changed_between, snapshot
from .view import View, make_view

EXIT_CODES = {"complete": 0, "round_limit": 2, "budget": 2, "error": 1, "interrupted": 130}
MESSAGE_KEPT = 4000
# (worktree, base sha) -> is the whole diff since the start done? The lead wires the manager.
ManagerCheck = Callable[[Path, str], bool]


@dataclass(frozen=True)
class RunOptions:
    worktree: Path
    goal: str = ""
    implementer: str = "claude"
    rounds: int = 10
    resume: bool = False
    budget_usd: float | None = None
    timeout_s: float = 3600.0
    host_args: tuple[str, ...] | None = None
    max_retries: int = MAX_RETRIES
    # The user's checks (`--check`, config `checks`); a resumed run keeps its header's.
    checks: tuple[CheckSpec, ...] = ()


@dataclass
class _Run:
    header: rollout.RunHeader
    root: Path
    path: Path
    rounds_used: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    tokens: int = 0
    message: str = ""
    # The failure text of the checks after the last verifier's exit, for the next round.
    checks_red: str = ""


def _toplevel(path: Path) -> Path:
    return toplevel(path)


def _begin(opts: RunOptions, root: Path, path: Path, now: float) -> tuple[_Run, Next]:
    if opts.resume:
        log = rollout.last_run(path)
        if log is None:
            raise BridgeError(f"nothing to resume: no run recorded in {WORKSPACE}/rollout.jsonl")
        if log.end is not None:
            raise BridgeError(f"nothing to resume: the last run ended ({log.end.status})")
        return _resumed(log, root, path, opts.max_retries)
    if not opts.goal.strip():
        raise BridgeError("give the goal to run, or --resume")
    handoff = write_handoff(root, Handoff(opts.goal), today=date.fromtimestamp(now))
    header = rollout.RunHeader(
        kind="run",
        run=handoff.stem,
        goal=opts.goal,
        implementer=opts.implementer,
        rounds=opts.rounds,
        handoff=handoff.relative_to(root).as_posix(),
        base_sha=head_sha(root),
        started=now,
        budget_usd=opts.budget_usd,
        checks=list(opts.checks),
    )
    rollout.append(path, header)
    return _Run(header, root, path), first(opts.rounds)


def _resumed(log: rollout.RunLog, root: Path, path: Path, max_retries: int) -> tuple[_Run, Next]:
    run = _Run(log.header, root, path, cost_usd=log.cost_usd)
    for r in log.rounds:
        if r.outcome == "ok":
            run.rounds_used, run.failures = run.rounds_used + 1, 0
        elif r.outcome != "interrupted":
            run.failures += 1
        run.tokens += r.tokens or 0
    if not log.rounds:
        return run, first(log.header.rounds)
    last = log.rounds[-1]
    if last.outcome == "interrupted":
        return run, Next("retry", "resumed after an interruption", last.role, last.wrap_up)
    facts = RoundFacts(
        last.role,
        last.wrap_up,
        last.outcome,
        _markers(last.markers),
        bool(last.files_changed),
        checks_passed=last.checks_passed,
    )
    return run, decide(facts, _progress(run, max_retries))


def _markers(names: Sequence[str]) -> Markers:
    return Markers(ready="ready" in names, exit="exit" in names)


def _progress(run: _Run, max_retries: int) -> Progress:
    h = run.header
    return Progress(
        run.rounds_used, h.rounds, run.failures, run.cost_usd, h.budget_usd, max_retries
    )


def _round_env(run: _Run, round_no: int, env: Mapping[str, str]) -> dict[str, str]:
    return {
        **env,
        "AUTOPILOT_CODEX_OWNER": "driver",
        "AUTOPILOT_CODEX_RUN": run.header.run,
        "AUTOPILOT_CODEX_ROUND": str(round_no),
    }


def _manager_done(manager: ManagerCheck, run: _Run, view: View) -> bool:
    """The manager's word on the whole diff; an unreachable manager accepts nothing.

    A check that keeps a `cost_usd` tally (the configured backends) is charged to the run,
    and told the budget left so it never makes a call the budget cannot cover.
    """
    budget = run.header.budget_usd
    if hasattr(manager, "budget_left"):
        manager.budget_left = None if budget is None else max(0.0, budget - run.cost_usd)
    spent = float(getattr(manager, "cost_usd", 0.0))
    try:
        return manager(run.root, run.header.base_sha)
    except BridgeError as exc:
        view.note(f"manager unavailable, the exit is not accepted: {exc}")
        return False
    finally:
        run.cost_usd += float(getattr(manager, "cost_usd", 0.0)) - spent


def _checks(run: _Run, view: View) -> list[CheckResult]:
    """The user's checks after a verifier's exit: an exit is accepted only when they pass."""
    specs = run.header.checks
    if not specs:
        return []
    results = run_checks(run.root, specs, exclude=(WORKSPACE,))
    for r in results:
        view.note(f"check: {status_line(r)}")
    run.checks_red = failure_reason(results)
    return results


def _launch(
    run: _Run, step: Next, opts: RunOptions, view: View, env: Mapping[str, str]
) -> tuple[RoundResult, list[str]]:
    """Run the round's process; what it changed, from working-tree snapshots either side."""
    h = run.header
    round_no, attempt = run.rounds_used + 1, run.failures + 1
    prompt = round_prompt(
        h.handoff,
        verify=step.role == "verify",
        wrap_up=step.wrap_up,
        round_no=round_no,
        rounds=h.rounds,
        checks_red=run.checks_red,
    )
    view.round_started(round_no, h.rounds, step.role, attempt)
    before = snapshot(run.root)
    result = run_round(
        h.implementer,
        prompt,
        cwd=run.root,
        env=_round_env(run, round_no, env),
        timeout_s=opts.timeout_s,
        extra_args=opts.host_args,
        on_update=view.update,
        stderr_path=run.root / WORKSPACE / "logs" / f"{h.run}-round{round_no}-{attempt}.stderr",
    )
    return result, changed_between(run.root, before, snapshot(run.root))


def _one_round(
    run: _Run,
    step: Next,
    opts: RunOptions,
    view: View,
    env: Mapping[str, str],
    manager: ManagerCheck | None,
) -> Next:
    h = run.header
    round_no, attempt, started = run.rounds_used + 1, run.failures + 1, time.time()
    result, changed = _launch(run, step, opts, view, env)
    ok = result.outcome == "ok"
    markers = parse(result.last_message) if ok else Markers()
    run.rounds_used += int(ok)
    if result.outcome != "interrupted":
        run.failures = 0 if ok else run.failures + 1
    run.cost_usd += result.cost_usd or 0.0
    run.tokens += result.tokens or 0
    verified = ok and markers.exit and step.role == "verify" and not changed
    checks = _checks(run, view) if verified else []
    green = None if not checks else passed(checks)
    done = None
    if manager is not None and verified and green is not False:
        done = _manager_done(manager, run, view)
    facts = RoundFacts(
        step.role, step.wrap_up, result.outcome, markers, bool(changed), done, green
    )
    nxt = decide(facts, _progress(run, opts.max_retries))
    record = rollout.RoundRecord(
        kind="round",
        run=h.run,
        round=round_no,
        attempt=attempt,
        role=step.role,
        wrap_up=step.wrap_up,
        start=started,
        end=time.time(),
        outcome=result.outcome,
        exit_code=result.exit_code,
        markers=markers.names(),
        files_changed=changed,
        cost_usd=result.cost_usd,
        tokens=result.tokens,
        last_action=result.last_action,
        message=result.last_message[-MESSAGE_KEPT:],
        next=nxt.action,
        detail=result.detail,
        checks_passed=green,
        checks=[status_line(c) for c in checks],
    )
    rollout.append(run.path, record)
    if ok:
        run.message = strip(result.last_message)
    view.round_ended(record, run.cost_usd, strip(result.last_message) or result.detail)
    return nxt


def run(
    opts: RunOptions,
    *,
    view: View,
    manager: ManagerCheck | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run (or resume) a rounds loop to its end; the final record, `exit_code` included."""
    env = dict(os.environ if env is None else env)
    started = time.time()
    root = _toplevel(opts.worktree)
    refuse_if_running(root)
    folder = prepare(root)
    state, step = _begin(opts, root, folder / "rollout.jsonl", started)
    h = state.header
    view.note(f"{h.rounds} rounds at most; handoff file {h.handoff}")
    # Held for the whole run, released however it ends: every round gets the rails.
    with hold(root, h.goal, h.run, h.rounds) as held:
        try:
            if h.budget_usd is not None and state.cost_usd >= h.budget_usd:
                step = Next("budget", f"budget ${h.budget_usd:.2f} used up")
            while step.runs_a_round:
                step = _one_round(state, step, opts, view, env, manager)
        except KeyboardInterrupt:
            step = Next("interrupted", "interrupted")
        finally:
            view.close()
        held.status, held.why = step.action, step.why
    if step.action != "interrupted":
        rollout.append(
            state.path, rollout.RunEnd(kind="end", run=h.run, status=step.action, end=time.time())
        )
    return {
        "status": step.action,
        "exit_code": EXIT_CODES[step.action],
        "why": step.why,
        "run": h.run,
        "implementer": h.implementer,
        "rounds_used": state.rounds_used,
        "rounds": h.rounds,
        "cost_usd": round(state.cost_usd, 6),
        "tokens": state.tokens,
        "handoff": h.handoff,
        "rollout": f"{WORKSPACE}/rollout.jsonl",
        "duration_s": round(time.time() - started, 3),
        "message": state.message,
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="autopilot-codex run",
        description="Pursue a goal in rounds, each a fresh claude -p or codex exec process.",
    )
    p.add_argument("goal", nargs="*", help="the objective, as the user states it")
    p.add_argument("--implementer", choices=HOSTS, default=None)
    p.add_argument("--rounds", type=int, default=10, help="counted rounds at most (default 10)")
    p.add_argument("--manager", choices=("openai", "codex", "none"), default="none")
    p.add_argument("--resume", action="store_true", help="continue the last unfinished run")
    p.add_argument("--json", action="store_true", help="print the final record as JSON")
    p.add_argument("--budget", type=float, default=None, help="stop once this many USD are spent")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per round")
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
    p.add_argument("--cwd", type=Path, default=Path())
    return p


def _options(args: argparse.Namespace) -> RunOptions:
    if args.rounds < 1:
        raise BridgeError("--rounds must be 1 or more")
    if not args.resume and args.implementer is None:
        raise BridgeError("choose the implementer: --implementer claude or --implementer codex")
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
    )


def _manager(backend: str, opts: RunOptions) -> ManagerCheck | None:
    if backend == "none":
        return None
    from .verdict import make

    goal = opts.goal
    if opts.resume:
        log = rollout.last_run(_toplevel(opts.worktree) / WORKSPACE / "rollout.jsonl")
        goal = log.header.goal if log is not None else goal
    return make(goal, backend)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    args = parser().parse_args(argv)
    out = stdout or sys.stdout
    try:
        opts = _options(args)
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


if __name__ == "__main__":
    raise SystemExit(main())
