"""The loop's records and their schema: what `state.json` and `plan.json` hold, and how an
older file is brought up to date. Where the files live and how they are written is `store`.

state.json (schema 4) is a common envelope (status, owner, session, style, host, budget and
spend, counters, caps, checks, wall, timestamps) and one record for the loop's style, under the
style's name, repeating nothing of the envelope. In memory the envelope holds that record as
`own`, typed by the record class the style registers (`StyleRecord`).

The records are frozen dataclasses checked by `typedjson` (no pydantic on the hook path); the
manager's pydantic answers are copied into them field by field.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from . import defaults, typedjson
from .checks.records import CheckResult, CheckSpec
from .state_file import envelope, migrate

__all__ = ["migrate"]

SCHEMA_VERSION = 4

Status = Literal[
    "running",
    "paused",
    "done",
    "aborted",
    "stopped",
    "stopped_budget",
    "stopped_iteration_limit",
    "stopped_tokens",
    "stopped_duration",
]

# Who a loop belongs to. `session`: the host session that started or first claimed it; other
# sessions' hooks are no-ops. `driver`: an outside driver (the rounds runner) that starts a
# fresh host session per round; every session in the worktree gets the rails, and Stop is the
# style's to answer.
Owner = Literal["session", "driver"]


def now_iso() -> str:
    # time.strftime, not datetime: one import fewer on every hook. Same text as isoformat.
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


class _Record:
    """Shared by the persisted records: copy with changes, and build from any object."""

    def evolve(self, **changes: Any) -> Any:
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    @classmethod
    def of(cls, source: object) -> Any:
        """Copy the fields this record has from another object, such as a manager answer."""
        dump = getattr(source, "model_dump", None)
        data = dump() if callable(dump) else typedjson.dump(source)
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return typedjson.load(cls, {k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Task(_Record):
    id: str
    title: str
    files: list[str]
    steps: list[str]
    acceptance: list[str]
    tests: list[str]
    # Ids of the tasks that must merge first (lanes); plans stored before it have none.
    depends_on: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Plan(_Record):
    summary: str
    tasks: list[Task]


class UnloadedPlan(Plan):
    """Stands in for the plan on paths that never read it; touching it is a bug, loudly."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("summary", "tasks"):
            raise RuntimeError("the plan was not loaded: use Store.load(with_plan=True)")
        return super().__getattribute__(name)


UNLOADED_PLAN = UnloadedPlan("", [])


@dataclass(frozen=True)
class Finding(_Record):
    severity: Literal["critical", "high", "medium", "low"]
    file: str | None
    line_start: int | None
    line_end: int | None
    title: str
    recommendation: str
    # The finding's ledger id when the review kept or restated one (see the manager schema).
    id: str | None = None


@dataclass(frozen=True)
class ReviewRecord(_Record):
    diff_hash: str
    decision: Literal["approve", "fix", "reject"]
    summary: str
    # The block text sent to the implementer; empty for approve. Replayed on a cache hit.
    reason: str = ""
    findings: list[Finding] = field(default_factory=list)
    at: str = field(default_factory=now_iso)


@dataclass(frozen=True)
class Inflight(_Record):
    """The loop's one manager call in flight: a background review, or a Stop judging the turn.

    Taken under the store lock; whoever finds it stale (its process gone, an older loop, past
    its deadline) clears it and charges `reserved_usd`, the worst case of the call it was
    making, since what that call cost is then unknown.
    """

    kind: Literal["review", "stop"]
    token: str
    pid: int
    generation: int
    # Epoch seconds (time.time), so another process can judge them.
    started_at: float
    deadline: float
    reserved_usd: float = 0.0
    # The digest of the diff a review is about: a Stop judging a newer diff need not wait.
    digest: str = ""


@dataclass(frozen=True)
class Reservation(_Record):
    """The worst case of a manager call made outside the one slot (`ask`), held from the moment
    it is priced until it is settled, so parallel calls never spend past the budget together.

    A reservation whose process is gone (`pid` dead, or another process under that pid: its
    `start` differs) or past its `deadline` is reclaimed and its `usd` charged.
    """

    token: str
    pid: int
    usd: float
    deadline: float
    # The process's start time as the kernel counts it ("" where it cannot be read).
    start: str = ""
    kind: str = "ask"


@dataclass(frozen=True)
class VerdictRecord(_Record):
    decision: Literal["continue", "done", "abort"]
    reason: str
    iteration: int
    current_task_done: bool = False
    at: str = field(default_factory=now_iso)


@dataclass(frozen=True)
class SpendCursor(_Record):
    """Where the implementer's spend was last read: the host's record (a transcript), the
    byte offset read up to, and the ids of the last messages counted (a host may write one
    message's usage on several lines)."""

    path: str
    offset: int = 0
    seen: list[str] = field(default_factory=list)
    # What the next look needs (`host.SpendRead`): a digest of the bytes read, to
    # notice a record rewritten under the reader; a host's running totals and its model at
    # `offset` (Codex).
    head: str = ""
    totals: list[int] = field(default_factory=list)
    model: str = ""
    # The subscription plan the record names ("": none, or an API key): dollars are notional.
    plan: str = ""
    # How the record was last found cut short or rewritten under the reader ("": never).
    tampered: str = ""


class StyleRecord(_Record):
    """A style's own record, held by the envelope as `State.own` and stored under the style's
    name. It holds nothing the envelope has: a style reads the session, counters, caps and
    clock there. A style's package registers its record by subclassing with the style's name
    (`class RalphRecord(StyleRecord, style="ralph")`), and imports it with the style's registry,
    so the state names no style and needs nothing above it."""

    # Whether a budget of 0 means none: a style whose loop may run without a dollar cap.
    budget_optional: ClassVar[bool] = False
    # Whether a loop of the style cannot be read without its record (not: its views say so).
    required: ClassVar[bool] = False
    # Whether the envelope's budget is the loop's cap (not: a cap kept elsewhere, as a run's).
    envelope_budget: ClassVar[bool] = True

    def __init_subclass__(cls, *, style: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if style:
            RECORDS[style] = cls

    def check(self) -> None:
        """Refuse values no bridge writes (`state_ranges`); raises typedjson.Invalid."""

    def ended(self, iteration: int) -> int:
        """How many iterations have ended when the envelope counts `iteration`."""
        return iteration

    def resumed(self) -> StyleRecord:
        """This record when the user resumes the loop."""
        return self

    def working_on(self) -> str:
        """The unit of work the loop is on, for the notices ("": none named)."""
        return ""


# Each style's record type, by the style's name, as its package registered it.
RECORDS: dict[str, type[StyleRecord]] = {}


@dataclass(frozen=True)
class State(_Record):
    goal: str
    plan: Plan
    base_sha: str
    worktree: str
    schema_version: int = SCHEMA_VERSION
    style: str = defaults.STYLE
    owner: Owner = "session"
    status: Status = "running"
    iteration: int = 0
    max_iterations: int = defaults.MAX_ITERATIONS
    budget_usd: float = defaults.BUDGET_USD
    budget_used_usd: float = 0.0
    # The implementer's spend, read from the host's own records (`implementer_spend`): a meter
    # of its own beside the manager's `budget_used_usd`; `budget_usd` caps their sum.
    implementer_used_usd: float = 0.0
    implementer_tokens: int = 0
    # Models the host used that the price table lacks (priced at its dearest row).
    implementer_unpriced: list[str] = field(default_factory=list)
    # Where each of the host's records was last read (a session's transcript, one more after a
    # resume), the most recent last; a record read again resumes from its own offset.
    spend_cursors: list[SpendCursor] = field(default_factory=list)
    # Caps besides the budget (0 = none): tokens of the implementer, wall seconds since
    # `started_epoch` (epoch seconds, when the loop started).
    max_tokens: int = 0
    max_seconds: float = 0.0
    started_epoch: float = field(default_factory=time.time)
    session_id: str | None = None
    # The host that started the loop or whose session claimed it (its commands, its dialect).
    host: str = defaults.HOST
    # The wall the loop started with (`guarded`): "on", "partly" or "off", and what it lacked;
    # "" for a loop from before it was judged. Short of "on", every message says UNGUARDED.
    wall: Literal["", "on", "partly", "off"] = ""
    wall_missing: list[str] = field(default_factory=list)
    stop_reason: str | None = None
    # Stop blocks since the last tool run: the stall guard.
    idle_stop_blocks: int = 0
    tool_events: int = 0
    stop_events: int = 0
    # Set by PreCompact; the next Stop without a tool run in between is let through.
    compaction_pending: bool = False
    # The one manager call in flight (seed 002: one call at a time per loop), if any.
    inflight: Inflight | None = None
    # Calls in flight besides it (`ask`), each holding its worst case against the budget.
    reservations: list[Reservation] = field(default_factory=list)
    # Bumped on every plan or resume, so a manager answer for an older loop is not applied.
    generation: int = 1
    # The style's own record (`StyleRecord`), typed by the style's registered record type;
    # None for a style without one.
    own: StyleRecord | None = None
    # The user's own checks (`--check`, config `checks`), fixed when the loop starts; never
    # taken from a plan. And their last run, which is reused while the tree is unchanged.
    checks: list[CheckSpec] = field(default_factory=list)
    last_checks: list[CheckResult] = field(default_factory=list)
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)

    def evolve(self, **changes: Any) -> State:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> str:
        """state.json: everything but the plan, which never changes and lives in plan.json.

        Compact, because `indent` forces json's pure-Python encoder; `status --json` indents.
        """
        data = {
            f.name: typedjson.dump(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in ("plan", "own")
        }
        data = envelope(data, self.style, typedjson.dump(self.own))
        # allow_nan=False: a NaN or Infinity is not JSON, and a NaN budget is no budget at all.
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def planless(*, goal: str, worktree: str, head: str, style: str, **fields: Any) -> State:
    """A loop of a style without a manager's plan (ralph, rounds): no tasks; the rest as
    given."""
    return State(
        goal=goal, plan=Plan("", []), base_sha=head, worktree=worktree, style=style, **fields
    )
