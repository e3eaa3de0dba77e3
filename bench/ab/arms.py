"""The arms, each through the product's real entry points (docs/benchmarks.md):

- solo: the host alone, headless, one prompt (`claude -p` / `codex exec`), behind the same
  wall as every other arm, capped at the same budget;
- autopilot: `autopilot-codex plan <goal>` from a terminal, then the host with the plugin
  loaded, given the goal (its first prompt claims the loop; the Stop hook runs it);
- ralph: `autopilot-codex ralph <prompt>` likewise, with a completion promise;
- rounds: `autopilot-codex run <goal> --implementer H --manager openai`;
- lanes: the same with `--lanes 2`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from autopilot_codex import cleanenv
from autopilot_codex.rounds.runner import RoundResult, headless, run_round

from . import asking, codexhome
from .context import HOST_LOG, ArmResult, Context, must, number

PROMISE = "TASK COMPLETE"
# Time for the product's own steps around a host session (plan, status), beyond the cap.
SETUP_S = 300.0


def _session(ctx: Context, prompt: str, *, plugin: bool) -> RoundResult:
    """One headless host session in the work tree, walled, capped in time and dollars. Claude
    Code runs with its question tool, answered by the trial's user (bench/ab/asking.py)."""
    runner = headless(ctx.host)
    extra = ctx.host_args(plugin=plugin)
    if ctx.host == "claude" and not plugin:
        extra += ["--max-budget-usd", f"{ctx.budget_usd:g}"]
    env = dict(ctx.env) if plugin else cleanenv.for_round(runner, ctx.env)
    if ctx.host == "claude":
        with (ctx.scratch / "host.stderr").open("ab") as stderr:
            return asking.run_session(
                prompt,
                cwd=ctx.work,
                env=env,
                extra_args=extra,
                wall_args=ctx.wall(True),
                timeout_s=ctx.time_cap_s,
                budget_usd=ctx.budget_usd,
                user=ctx.user,
                stderr=stderr,
                before_answer=(lambda sid: _resume_for_user(ctx, sid)) if plugin else _nothing,
            )
    return run_round(
        ctx.host,
        prompt,
        cwd=ctx.work,
        env=env,
        timeout_s=ctx.time_cap_s,
        stderr_log=HOST_LOG,
        extra_args=extra,
        wall_args=ctx.wall(True),
        spent=lambda usd: usd >= ctx.budget_usd,
    )


def _nothing(_session: str) -> None:
    return None


def _resume_for_user(ctx: Context, session: str) -> None:
    """What a user does when the loop pauses with a question for them (`status`: "Question
    for you: ..."): answers it, then `resume`s the loop, for the session that asked. A question
    the manager answered, or one asked with no loop paused for it, needs no resume."""
    if ctx.loop_state().get("status") != "paused":
        return
    asked = [e for e in ctx.ledger() if e.get("event") in ("question.answered", "question.to_user")]
    if asked and asked[-1].get("event") == "question.to_user":
        args = ["resume", "--session-id", session] if session else ["resume"]
        must(ctx.launcher(*args, timeout=SETUP_S), "autopilot-codex resume")


def solo(ctx: Context) -> ArmResult:
    result = _session(ctx, ctx.task.instruction, plugin=False)
    return ArmResult(
        said_done=result.outcome == "ok",
        host_usd=result.cost_usd or 0.0,
        manager_usd=0.0,
        tokens=result.tokens or 0,
        status="done" if result.outcome == "ok" else result.outcome,
        timed_out=result.outcome == "timeout",
        detail="" if result.outcome == "ok" else result.detail,
    )


def _caps(ctx: Context) -> list[str]:
    return ["--budget", f"{ctx.budget_usd:g}", "--max-duration", f"{int(ctx.time_cap_s)}s"]


def _in_session(ctx: Context, start: list[str], prompt: str, done: str) -> ArmResult:
    """A loop started from a terminal, then run by one host session with the plugin."""
    if ctx.host == "codex":
        ctx = codexhome.with_plugin(ctx, SETUP_S)
    must(ctx.launcher(*start, timeout=SETUP_S), f"autopilot-codex {start[0]}")
    result = _session(ctx, prompt, plugin=True)
    state = ctx.loop_state()
    status = str(state.get("status", "none"))
    if status in ("running", "paused"):
        # The host ended while the loop still ran (a crash, the time cap): ended for it.
        ctx.launcher("stop", "bench: the host session ended", timeout=SETUP_S)
    return ArmResult(
        said_done=status == done,
        host_usd=result.cost_usd or number(state, "implementer_used_usd"),
        manager_usd=number(state, "budget_used_usd"),
        tokens=result.tokens or 0,
        status=status,
        timed_out=result.outcome == "timeout",
        detail="" if result.outcome == "ok" else result.detail,
    )


def autopilot(ctx: Context) -> ArmResult:
    goal = ctx.task.instruction
    return _in_session(ctx, ["plan", *_caps(ctx), "--", goal], goal, "done")


def ralph(ctx: Context) -> ArmResult:
    prompt = (
        f"{ctx.task.instruction}\n\nWhen the task is fully done and verified, end your last "
        f"message with <promise>{PROMISE}</promise> on its own line, and only then."
    )
    start = ["ralph", *_caps(ctx), "--completion-promise", PROMISE, "--", prompt]
    return _in_session(ctx, start, prompt, "done")


def _run(ctx: Context, *more: str) -> ArmResult:
    args = ["run", "--implementer", ctx.host, "--manager", "openai", *_caps(ctx), "--json"]
    args += [f"--host-arg={a}" for a in ctx.host_args(plugin=ctx.host == "claude")]
    proc = ctx.launcher(*args, *more, "--", ctx.task.instruction, timeout=ctx.time_cap_s + SETUP_S)
    # 0 complete, 2 a limit or a cap: both leave a record; anything else is the arm's error.
    must(proc, "autopilot-codex run", ok=(0, 2))
    record = json.loads(proc.stdout)
    status = str(record.get("status", ""))
    host, manager, tokens = meters(record)
    return ArmResult(
        said_done=status == "complete",
        host_usd=host,
        manager_usd=manager,
        tokens=tokens,
        status=status,
        timed_out=status == "duration",
        detail=str(record.get("why", "")),
    )


def meters(record: dict[str, object]) -> tuple[float, float, int]:
    """(host, manager, tokens) from `run --json`: a rounds run names each meter; a lanes run
    gives its total (`spent`) and each lane's own (its rounds run's, `tasks[].usd`), so the
    driver's manager is the rest."""
    spent = record.get("spent")
    if not isinstance(spent, dict):
        return number(record, "rounds_usd"), number(record, "manager_usd"), int(number(record, "tokens"))
    tasks = record.get("tasks")
    lanes = sum(number(t, "usd") for t in tasks if isinstance(t, dict)) if isinstance(tasks, list) else 0.0
    total = number(spent, "usd")
    return lanes, max(0.0, total - lanes), int(number(spent, "tokens"))


def rounds(ctx: Context) -> ArmResult:
    return _run(ctx, "--rounds", "10")


def lanes(ctx: Context) -> ArmResult:
    return _run(ctx, "--lanes", "2")


ARMS: dict[str, Callable[[Context], ArmResult]] = {
    "solo": solo,
    "autopilot": autopilot,
    "ralph": ralph,
    "rounds": rounds,
    "lanes": lanes,
}
