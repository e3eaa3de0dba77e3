"""Tolerant readers of a loop's files, for the commands that only look (report, logs, loops).

The engine's own readers (`Store.load`, `rollout.read`) refuse what they cannot trust and
quarantine it; a viewer must never do that, nor fail on a field it does not know or one that
an older or newer bridge left out. So these read plain JSON, keep what is there, and skip a
line that does not parse. They never write.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import surrogates
from .defaults import STYLE
from .nofollow import small
from .state_file import migrate

STATE = "state.json"
PLAN = "plan.json"
EVENTS = "events.jsonl"
RESULT = "last.json"
ROLLOUT = ("rounds", "rollout.jsonl")


# Beyond this a file is not read: a ledger of a long loop is a few MB.
MAX_BYTES = 64 * 1024 * 1024


def read_bytes(path: Path, limit: int = MAX_BYTES) -> bytes | None:
    """A regular file's bytes, None otherwise. The loop's own files are never links, so a link
    is not followed (it may point at anything of the user's); a FIFO or device would block or
    never end, so it is not read (`nofollow.small`)."""
    return small(path, limit)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object, or None when the file is missing, unreadable or not an object."""
    raw = read_bytes(path)
    try:
        data = surrogates.loads(raw) if raw is not None else None
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file that is a JSON object, in order; the rest is skipped."""
    raw = read_bytes(path)
    if raw is None:
        return []
    records = []
    for line in raw.splitlines():
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            item = surrogates.loads(line)
            if isinstance(item, dict):
                records.append(item)
    return records


def text(data: dict[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def number(data: dict[str, Any], key: str, default: float = 0.0) -> float:
    """A number the file holds; `default` for anything else, NaN and the infinities included
    (JSON as Python writes it may spell them, and no view can draw or sum them)."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value) if math.isfinite(value) else default


def items(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def strings(data: dict[str, Any], key: str) -> list[str]:
    """The strings of a list the file holds; [] for anything that is not a list."""
    value = data.get(key)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


@dataclass(frozen=True)
class LoopFiles:
    """The files of one loop's project folder, read once."""

    folder: Path
    state: dict[str, Any]
    plan: dict[str, Any]
    events: list[dict[str, Any]]
    rollout: list[dict[str, Any]]
    result: dict[str, Any]

    @property
    def style(self) -> str:
        return (
            text(self.state, "style")
            or text(self.result, "style")
            or ("rounds" if self.rollout else "unknown")
        )

    @property
    def goal(self) -> str:
        prompt = text(self.state, "prompt")  # a style's record, merged in by `flat_state`
        return text(self.state, "goal") or prompt or self.run_header().get("goal", "") or ""

    @property
    def worktree(self) -> str:
        return text(self.state, "worktree")

    @property
    def status(self) -> str:
        status = text(self.state, "status")
        if status:
            return status
        end = self.run_end()
        return text(end, "status") if end else ("running" if self.rollout else "unknown")

    @property
    def held_by_run(self) -> bool:
        """Whether a run of the rounds driver holds the loop (its record names the run, or only
        a rollout is left): its base, budget and progress are then the rollout's."""
        return "run_id" in self.state or (not self.state and bool(self.rollout))

    def run_header(self) -> dict[str, Any]:
        headers = [r for r in self.rollout if r.get("kind") == "run"]
        return headers[-1] if headers else {}

    def run_end(self) -> dict[str, Any]:
        run = text(self.run_header(), "run")
        ends = [r for r in self.rollout if r.get("kind") == "end" and r.get("run") == run]
        return ends[-1] if ends else {}

    def rounds(self) -> list[dict[str, Any]]:
        run = text(self.run_header(), "run")
        return [r for r in self.rollout if r.get("kind") == "round" and r.get("run") == run]

    def run_budget(self) -> object:
        """The last run's dollar cap, with every `run --resume --budget` since applied (None:
        no cap)."""
        header = self.run_header()
        budget = header.get("budget_usd")
        run = text(header, "run")
        for record in self.rollout:
            if (
                record.get("kind") == "raise"
                and record.get("run") == run
                and record.get("budget_usd") is not None
            ):
                budget = record.get("budget_usd")
        return budget


def flat_state(data: dict[str, Any]) -> dict[str, Any]:
    """The state as one mapping: since schema 3 a style's own fields sit in a record under the
    style's name (`autopilot`, `ralph`, `rounds`); the envelope's fields win on a clash."""
    style = data.get("style")
    record = data.get(style if isinstance(style, str) else STYLE)
    return {**record, **data} if isinstance(record, dict) else data


def load(folder: Path) -> LoopFiles:
    return LoopFiles(
        folder=folder,
        state=flat_state(migrate(read_json(folder / STATE) or {})),
        plan=read_json(folder / PLAN) or {},
        events=read_lines(folder / EVENTS),
        rollout=read_lines(folder.joinpath(*ROLLOUT)),
        result=read_json(folder / RESULT) or {},
    )


def last_activity(folder: Path) -> float:
    """The newest modification time among the loop's own files (the folder's when none)."""
    times = []
    for path in (folder / STATE, folder / EVENTS, folder / RESULT, folder.joinpath(*ROLLOUT)):
        with contextlib.suppress(OSError):
            times.append(os.lstat(path).st_mtime)
    if not times:
        with contextlib.suppress(OSError):
            times.append(os.lstat(folder).st_mtime)
    return max(times, default=0.0)
