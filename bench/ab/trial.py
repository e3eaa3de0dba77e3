"""One trial, start to end: a fresh work tree, the hidden tests copied out of its reach, the
arm, the verifier, the record. An arm that fails is a trial that did not resolve, recorded
with its error; only a setup that would make the trial unfair (a leak, no wall) stops it."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from autopilot_codex.rounds.walled import RoundWall, round_wall

from . import codexhome, homes, leaks
from .arms import ARMS
from .context import ArmError, ArmResult, Context
from .records import Trial
from .tasks import Task
from .user import ScriptedUser
from .workdir import VERIFIER, TrialSetupError, hide_tests, make_repo, verify


@dataclass(frozen=True)
class Settings:
    host: str
    model: str
    budget_usd: float | None  # None: each task's own
    time_cap_s: float | None  # None: each task's own agent timeout
    env: Mapping[str, str]


def wall_for(host: str, work: Path, home: Path, env: Mapping[str, str]) -> RoundWall:
    """The wall the product puts around a round, for this trial's work tree; the trial is
    refused when the machine cannot raise it (the hidden tests would be in reach)."""
    with homes.named(home):
        found = round_wall(host, work, env)
    if found.boundary is None:
        raise TrialSetupError(
            f"{host}'s sandbox cannot start here (Linux: bubblewrap and socat): the hidden "
            "tests could not be kept from the implementer, so no trial is run"
        )
    return found


def _wall_args(found: RoundWall, home: Path, scratch: Path) -> Callable[[bool], list[str]]:
    def args(git_writable: bool) -> list[str]:
        spec = dataclasses.replace(found.spec, git_writable=git_writable)
        walled = RoundWall(found.host, spec, found.boundary)
        folder = scratch / ("wall-git" if git_writable else "wall")
        folder.mkdir(exist_ok=True)
        with homes.named(home):
            return walled.args(folder)

    return args


def _environment(settings: Settings, home: Path) -> dict[str, str]:
    env = dict(settings.env)
    env["AUTOPILOT_CODEX_HOME"] = str(home)
    # The bridge runs on the harness's own interpreter: no per-trial environment to build.
    env.setdefault("AUTOPILOT_CODEX_PYTHON", sys.executable)
    # The verifier's python3 and pytest are the harness's.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", os.defpath)])
    return env


def prepare(task: Task, trial_dir: Path, settings: Settings) -> tuple[Context, Path]:
    """The trial's places and its arm's context; the hidden tests' copy."""
    found = leaks.leaks(task.folder)
    if found:
        raise TrialSetupError(f"task {task.name}: " + "; ".join(found))
    home, work, verifier = trial_dir / "state", trial_dir / "work", trial_dir / VERIFIER
    # On the wall's list of what the implementer may not read: the copy, and the task itself.
    # A Codex session's copy of the user's login too (not its CODEX_HOME: Codex runs its
    # sandbox helper from there).
    homes.make(home, [verifier, task.folder, trial_dir / codexhome.FOLDER / "auth.json"])
    env = _environment(settings, home)
    make_repo(task, work, env)
    copied = leaks.leaks(task.folder, work)
    if copied:
        raise TrialSetupError(f"task {task.name}: " + "; ".join(copied))
    hidden = hide_tests(task, verifier)
    found_wall = wall_for(settings.host, work, home, env)
    ctx = Context(
        task=task,
        work=work,
        scratch=trial_dir,
        state_home=home,
        host=settings.host,
        model=settings.model,
        budget_usd=settings.budget_usd or task.budget_usd,
        time_cap_s=settings.time_cap_s or task.agent_timeout_s,
        env=env,
        wall=_wall_args(found_wall, home, trial_dir),
        user=ScriptedUser(task.answers),
    )
    return ctx, hidden


def run_trial(task: Task, arm: str, rep: int, trial_dir: Path, settings: Settings) -> Trial:
    """One trial's record. A setup that would be unfair raises TrialSetupError."""
    ctx, hidden = prepare(task, trial_dir, settings)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    clock = time.monotonic()
    error = ""
    try:
        result = ARMS[arm](ctx)
    except (ArmError, OSError, ValueError) as exc:
        result, error = ArmResult(False, 0.0, 0.0, 0, "error"), str(exc)
    wall_s = time.monotonic() - clock
    verdict = verify(task, hidden, ctx.work, ctx.env)
    (trial_dir / "verifier.log").write_text(verdict.output, encoding="utf-8")
    return Trial(
        task=task.name,
        arm=arm,
        rep=rep,
        host=settings.host,
        model=settings.model,
        resolved=verdict.resolved,
        said_done=result.said_done,
        host_usd=round(result.host_usd, 6),
        manager_usd=round(result.manager_usd, 6),
        tokens=result.tokens,
        wall_s=round(wall_s, 3),
        status=result.status,
        started=started,
        error=error,
        timed_out=result.timed_out,
        detail=result.detail[-2000:],
        questions_asked=ctx.user.asked,
        questions_answered=ctx.user.answered,
        questions_by_manager=ctx.questions_by_manager(),
    )
