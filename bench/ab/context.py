"""What one trial hands its arm: the task, the places, the host and model, the caps, the
environment every process of the trial starts from, and the wall's flags."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autopilot_codex.hosts.claude.headless import DEFAULT_ARGS as CLAUDE_HEADLESS

from .tasks import Task
from .user import ScriptedUser

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "bin" / "autopilot-codex"
# Where a host's stderr goes: inside the repository's git folder, so it is no project file.
HOST_LOG = ".git/bench-ab-host.log"


class ArmError(RuntimeError):
    """The arm could not run the trial (a setup command failed): recorded, never raised on."""


@dataclass(frozen=True)
class ArmResult:
    said_done: bool
    host_usd: float
    manager_usd: float
    tokens: int
    status: str
    timed_out: bool = False
    detail: str = ""


@dataclass(frozen=True)
class Context:
    task: Task
    work: Path
    scratch: Path  # the trial's own folder, outside the work tree
    state_home: Path
    host: str
    model: str
    budget_usd: float
    time_cap_s: float
    env: Mapping[str, str]
    # The wall's flags for one host session (`git_writable`: may it commit?).
    wall: Callable[[bool], list[str]]
    # The one user every arm's questions go to, answering from the task (bench/ab/user.py).
    user: ScriptedUser = field(default_factory=lambda: ScriptedUser({}))

    def host_args(self, *, plugin: bool) -> list[str]:
        """The host's flags every arm shares: the model, headless permissions (the product's
        own for a headless round: edits accepted, Bash allowed, inside the wall), the plugin."""
        if self.host == "claude":
            args = ["--model", self.model, *CLAUDE_HEADLESS]
            return [*args, "--plugin-dir", str(ROOT)] if plugin else args
        return ["-m", self.model] if self.model else []

    def launcher(self, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        """`autopilot-codex -C <work> <args>`, the product's own terminal entry."""
        try:
            proc = subprocess.run(
                [str(LAUNCHER), "-C", str(self.work), *args],
                capture_output=True,
                text=True,
                env=dict(self.env),
                stdin=subprocess.DEVNULL,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ArmError(f"autopilot-codex {args[0]} did not end in {timeout:.0f}s") from exc
        # Kept beside the trial for whoever reads a surprising result.
        with (self.scratch / "arm.log").open("a", encoding="utf-8") as log:
            log.write(f"$ autopilot-codex {args[0]} (exit {proc.returncode})\n")
            log.write(proc.stdout + proc.stderr + "\n")
        return proc

    def ledger(self) -> list[dict[str, Any]]:
        """The trial's one loop's events ([] when no loop was made)."""
        found = sorted((self.state_home / "projects").glob("*/events.jsonl"))
        if not found:
            return []
        events = []
        for line in found[0].read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return events

    def questions_by_manager(self) -> int:
        return sum(e.get("event") == "question.answered" for e in self.ledger())

    def loop_state(self) -> dict[str, Any]:
        """The trial's one loop's state.json ({} when no loop was made)."""
        found = sorted((self.state_home / "projects").glob("*/state.json"))
        if not found:
            return {}
        data = json.loads(found[0].read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}


def number(data: Mapping[str, Any], key: str) -> float:
    value = data.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def must(proc: subprocess.CompletedProcess[str], what: str, ok: Sequence[int] = (0,)) -> None:
    if proc.returncode not in ok:
        tail = (proc.stdout + proc.stderr).strip()[-1500:]
        raise ArmError(f"{what} exited {proc.returncode}: {tail}")
