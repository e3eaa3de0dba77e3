"""The loop's state: its model, where it lives, the lock around it, and the event ledger."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import BridgeError, LockTimeout, StateCorrupt
from .manager.schemas import Finding, Plan, Task
from .paths import active_marker, project_dir, state_home

SCHEMA_VERSION = 1

Status = Literal[
    "running",
    "paused",
    "done",
    "aborted",
    "stopped",
    "stopped_budget",
    "stopped_iteration_limit",
]

# How many reviewed diffs are remembered, so an identical diff is never paid for twice.
REVIEW_CACHE_SIZE = 64


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewRecord(_Model):
    diff_hash: str
    decision: Literal["approve", "fix", "reject"]
    summary: str
    # The block text sent to the implementer; empty for approve. Replayed on a cache hit.
    reason: str = ""
    findings: list[Finding] = Field(default_factory=list)
    at: str = Field(default_factory=now_iso)


class VerdictRecord(_Model):
    decision: Literal["continue", "done", "abort"]
    reason: str
    iteration: int
    current_task_done: bool = False
    at: str = Field(default_factory=now_iso)


class State(_Model):
    schema_version: int = SCHEMA_VERSION
    status: Status = "running"
    goal: str
    plan: Plan
    current_task: str | None
    completed_tasks: list[str] = Field(default_factory=list)
    base_sha: str
    # HEAD when the current task started: reviews diff against it.
    task_base_sha: str
    iteration: int = 0
    max_iterations: int = 30
    budget_usd: float = 5.0
    budget_used_usd: float = 0.0
    no_progress_streak: int = 0
    session_id: str | None = None
    host: str = "claude"
    worktree: str
    model: str
    review_mode: str = "edit"
    stop_reason: str | None = None
    last_review: ReviewRecord | None = None
    last_verdict: VerdictRecord | None = None
    reviewed: list[ReviewRecord] = Field(default_factory=list)
    # Stop blocks since the last tool run: the stall guard.
    idle_stop_blocks: int = 0
    tool_events: int = 0
    stop_events: int = 0
    last_verdict_head: str | None = None
    last_review_head: str | None = None
    # Set by PreCompact; the next Stop without a tool run in between is let through.
    compaction_pending: bool = False
    # Bumped on every plan or resume, so a manager answer for an older loop is not applied.
    generation: int = 1
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)

    def task(self, task_id: str | None = None) -> Task | None:
        wanted = task_id or self.current_task
        if wanted is None:
            return None
        return next((t for t in self.plan.tasks if t.id == wanted), None)

    def task_position(self) -> tuple[int, int]:
        ids = [t.id for t in self.plan.tasks]
        index = ids.index(self.current_task) + 1 if self.current_task in ids else len(ids)
        return index, len(ids)

    def cached_review(self, diff_hash: str) -> ReviewRecord | None:
        return next((r for r in self.reviewed if r.diff_hash == diff_hash), None)


class Store:
    """The files of one worktree's loop, under `<home>/projects/<key>/`."""

    def __init__(self, worktree: Path, *, home: Path | None = None, lock_timeout: float = 10.0):
        self.worktree = worktree
        self.home = home or state_home()
        self.dir = project_dir(worktree, self.home)
        self.state_path = self.dir / "state.json"
        self.events_path = self.dir / "events.jsonl"
        self.lock_path = self.dir / "state.lock"
        self.marker = active_marker(worktree, self.home)
        self.lock_timeout = lock_timeout

    # -- lock ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive access for a read-modify-write, waiting at most `lock_timeout` seconds."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _acquire(fd, self.lock_timeout)
            try:
                yield
            finally:
                _release(fd)
        finally:
            os.close(fd)

    # -- state --------------------------------------------------------------------------

    def load(self) -> State | None:  # noqa: C901 - one check per way a file can be bad
        """The current state, None when there is none. Corrupt state is moved aside."""
        try:
            text = self.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self._quarantine(f"unreadable ({exc})")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            self._quarantine(f"not valid JSON ({exc.msg} at line {exc.lineno})")
        if isinstance(data, dict) and isinstance(data.get("schema_version"), int):
            version = data["schema_version"]
            if version > SCHEMA_VERSION:
                raise BridgeError(
                    f"{self.state_path} was written by a newer autopilot-codex "
                    f"(schema {version}); update the plugin"
                )
            data = migrate(data)
        try:
            return State.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "top level"
            self._quarantine(f"invalid at {where}: {first['msg']}")

    def save(self, state: State) -> State:
        """Write atomically (temp file + rename) and keep the active-loop index in step."""
        state = state.model_copy(update={"updated_at": now_iso()})
        _atomic_write(self.state_path, state.model_dump_json(indent=2) + "\n")
        if state.status == "running":
            marker = {"worktree": state.worktree, "session_id": state.session_id}
            _atomic_write(self.marker, json.dumps(marker) + "\n")
        else:
            with contextlib.suppress(FileNotFoundError):
                self.marker.unlink()
        return state

    def _quarantine(self, why: str) -> NoReturn:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        aside = self.state_path.with_name(f"state.json.corrupt-{stamp}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(self.state_path, aside)
        with contextlib.suppress(FileNotFoundError):
            self.marker.unlink()
        self.append_event("state.corrupt", decision="allow", reason=f"{why}; moved to {aside.name}")
        raise StateCorrupt(
            f"state.json was {why}; moved aside to {aside} and the loop is off. "
            "Start again with /autopilot-codex:codex-plan"
        )

    # -- ledger -------------------------------------------------------------------------

    def append_event(self, event: str, **fields: Any) -> None:
        """One JSON object per line, written with a single append so lines never interleave."""
        record = {"ts": now_iso(), "event": event, **fields}
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def tail_events(self, count: int = 20) -> list[dict[str, Any]]:
        """The last events, read from the end of the file so a long ledger costs nothing."""
        try:
            with self.events_path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - 64 * 1024 * max(1, count // 50 + 1)))
                lines = handle.read().splitlines()[-count:]
        except FileNotFoundError:
            return []
        events = []
        for raw in lines:
            with contextlib.suppress(ValueError):
                events.append(json.loads(raw))
        return events


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Upgrade older state step by step; each step is a small named function (none yet)."""
    return data


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


try:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _release(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


def _acquire(fd: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.002
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            raise LockTimeout(f"another autopilot-codex hook held the lock for over {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
