"""A run: every (task, arm, repetition) trial, interleaved by repetition and task so a slow
drift (an API's latency, a rate limit) falls on every arm alike; each trial's record is
appended to the run's `trials.jsonl` as it ends, and `meta.json` says what was run."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from autopilot_codex import __version__

from . import records, tasks
from .trial import Settings, run_trial

DEFAULT_TASKS = Path(__file__).resolve().parent / "tasks"
RESULTS = Path(__file__).resolve().parents[1] / "results"


@dataclass(frozen=True)
class RunPlan:
    tasks: Path
    arms: tuple[str, ...]
    n: int
    host: str
    model: str
    budget_usd: float | None = None
    time_cap_s: float | None = None
    only: tuple[str, ...] = ()
    scratch: Path | None = None  # where the trials' folders go (default: a new temp folder)


def _version(command: list[str]) -> str:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (proc.stdout.strip().splitlines() or ["unknown"])[0]


def meta(plan: RunPlan, chosen: list[tasks.Task], env: Mapping[str, str]) -> dict[str, object]:
    host_cmd = env.get(f"AUTOPILOT_CODEX_{plan.host.upper()}_CMD", plan.host)
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "autopilot_codex": __version__,
        "host": plan.host,
        "host_version": _version([*host_cmd.split(), "--version"]),
        "model": plan.model,
        "manager_model": env.get("AUTOPILOT_CODEX_MODEL", "(the product's default)"),
        "arms": list(plan.arms),
        "n": plan.n,
        "tasks": [t.name for t in chosen],
        "task_set": str(plan.tasks),
        "budget_usd": plan.budget_usd,
        "time_cap_s": plan.time_cap_s,
        "python": platform.python_version(),
        "plan": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(plan).items()},
    }


def run(
    plan: RunPlan,
    out: Path | None,
    env: Mapping[str, str],
    progress: Callable[[str], None] = lambda _line: None,
) -> Path:
    """Run the plan into `out` (made; a fresh folder under bench/results/ by default)."""
    chosen = tasks.discover(plan.tasks)
    if plan.only:
        chosen = [t for t in chosen if t.name in plan.only]
    run_dir = out or RESULTS / time.strftime("ab-%Y%m%d-%H%M%S", time.gmtime())
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "meta.json").write_text(json.dumps(meta(plan, chosen, env), indent=2) + "\n")
    settings = Settings(plan.host, plan.model, plan.budget_usd, plan.time_cap_s, env)
    # The trials' work trees live outside this checkout (a repository inside another would
    # be the product's own business); the folder is named in meta.json and kept.
    scratch = plan.scratch or Path(tempfile.mkdtemp(prefix="bench-ab-trials-"))
    (run_dir / "scratch.txt").write_text(f"{scratch}\n")
    for rep in range(plan.n):
        for task in chosen:
            for arm in plan.arms:
                trial_dir = scratch / f"{task.name}.{arm}.{rep}"
                shutil.rmtree(trial_dir, ignore_errors=True)
                trial = run_trial(task, arm, rep, trial_dir, settings)
                records.append(run_dir, trial)
                progress(
                    f"{task.name} {arm} #{rep}: resolved={trial.resolved} "
                    f"said_done={trial.said_done} ${trial.usd:.4f} {trial.wall_s:.0f}s"
                )
    return run_dir
