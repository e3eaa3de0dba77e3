"""The append-only JSONL rollout: one header per run, one line per round, one end line.

A crash can tear the last line; reading skips a torn last line, and the next append cuts the
fragment first (it was never a record) so it can neither swallow nor be mistaken for one. A bad line anywhere else is corruption
and is reported, never guessed around.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import IO, Any, Literal

from .. import surrogates, typedjson
from ..checks.run import CheckSpec
from ..errors import BridgeError

Outcome = Literal["ok", "crashed", "timeout", "stream_error", "interrupted", "budget"]
Role = Literal["implement", "verify"]


@dataclass(frozen=True)
class RunHeader:
    kind: Literal["run"]
    run: str
    goal: str
    implementer: str
    rounds: int
    handoff: str
    base_sha: str
    started: float
    budget_usd: float | None = None
    # The caps besides the budget (0 = none): the rounds' tokens, and wall seconds since
    # `started`. A `RunRaise` may raise these and `rounds` and `budget_usd` later.
    max_tokens: int = 0
    max_seconds: float = 0.0
    # The user's checks, fixed when the run starts (a resumed run keeps them).
    checks: list[CheckSpec] = field(default_factory=list)
    # The config's `checks_env` when the run started: names the checks get on top of the few.
    checks_env: list[str] = field(default_factory=list)
    # The manager backend that judges a verifier's exit (`run --manager`), which `--resume`
    # keeps unless given another; "" for none (and for a run recorded before it was kept).
    manager: str = ""


@dataclass(frozen=True)
class RoundRecord:
    kind: Literal["round"]
    run: str
    round: int
    attempt: int
    role: Role
    wrap_up: bool
    start: float
    end: float
    outcome: Outcome
    exit_code: int | None
    markers: list[str]
    files_changed: list[str]
    cost_usd: float | None
    tokens: int | None
    last_action: str
    message: str
    # What the driver decided after this round, so --resume picks up at the same point.
    next: str
    detail: str = ""
    # The checks after a verifier's exit: None when none ran; their status lines.
    checks_passed: bool | None = None
    checks: list[str] = field(default_factory=list)
    # What the round changed of the driver's own files (put back since): "handoff objective",
    # "rollout".
    tampered: list[str] = field(default_factory=list)
    # The commit the driver made of the round's changes ("" when there was nothing to commit).
    commit: str = ""
    # What the driver's manager calls after this round cost (charged to the run beside the
    # round's own `cost_usd`), and its word on the whole diff: None when it was not asked, False
    # when it said not done or could not be asked (a cap reached, the manager unavailable).
    manager_usd: float = 0.0
    manager_done: bool | None = None
    # The model whose tokens were priced at the dearest row of the host's table: the round's
    # process reported tokens, no dollars, and named no model the table knows.
    unpriced: str = ""


@dataclass(frozen=True)
class RunEnd:
    kind: Literal["end"]
    run: str
    status: str
    end: float


@dataclass(frozen=True)
class Raise:
    """The caps `run --resume` was given (None: not given; 0 tokens or seconds: no cap), and
    the manager."""

    rounds: int | None = None
    budget_usd: float | None = None
    max_tokens: int | None = None
    max_seconds: float | None = None
    # `run --resume --manager NAME`: the backend from here on ("none": no manager; None: the
    # run's own).
    manager: str | None = None

    def given(self) -> dict[str, Any]:
        """What was given, by the header's field it raises (a `RunRaise`'s run and time left
        out)."""
        return {
            f.name: value for f in fields(Raise) if (value := getattr(self, f.name)) is not None
        }


@dataclass(frozen=True, kw_only=True)
class RunRaise(Raise):
    """`run --resume` with a cap raised (`--rounds`, `--budget`, `--max-tokens`,
    `--max-duration`) or another manager (`--manager`), as the rollout keeps it: from here on
    the run's header reads with the values given, and a run that had ended at a cap is open
    again."""

    kind: Literal["raise"]
    run: str
    at: float


@dataclass
class RunLog:
    # The run's header, with every raise since applied.
    header: RunHeader
    rounds: list[RoundRecord] = field(default_factory=list)
    end: RunEnd | None = None
    raises: list[RunRaise] = field(default_factory=list)

    @property
    def rounds_usd(self) -> float:
        return sum(r.cost_usd or 0.0 for r in self.rounds)

    @property
    def manager_usd(self) -> float:
        return sum(r.manager_usd for r in self.rounds)

    @property
    def cost_usd(self) -> float:
        return self.rounds_usd + self.manager_usd

    @property
    def tokens(self) -> int:
        return sum(r.tokens or 0 for r in self.rounds)

    def raised(self, record: RunRaise) -> None:
        self.header = replace(self.header, **record.given())
        self.end = None
        self.raises.append(record)


Record = RunHeader | RoundRecord | RunEnd | RunRaise


def line(record: Record) -> bytes:
    """One record as the rollout stores it: a JSON line."""
    return (json.dumps(typedjson.dump(record), ensure_ascii=False, sort_keys=True) + "\n").encode()


def append(path: Path, record: Record) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        _drop_torn_tail(handle)
        handle.write(line(record))
        handle.flush()
        os.fsync(handle.fileno())


def _drop_torn_tail(handle: IO[bytes]) -> None:
    """Cut a last line that has no newline: a write that never finished, never a record."""
    size = handle.seek(0, os.SEEK_END)
    if size == 0:
        return
    handle.seek(max(0, size - 1))
    if handle.read(1) == b"\n":
        return
    keep, pos = 0, size
    while pos > 0:
        start = max(0, pos - 4096)
        handle.seek(start)
        at = handle.read(pos - start).rfind(b"\n")
        if at >= 0:
            keep = start + at + 1
            break
        pos = start
    handle.truncate(keep)
    handle.seek(0, os.SEEK_END)


def _record(data: object) -> Record:
    kind = data.get("kind") if isinstance(data, dict) else None
    cls = {"run": RunHeader, "round": RoundRecord, "end": RunEnd, "raise": RunRaise}.get(str(kind))
    if cls is None:
        raise typedjson.Invalid("kind", "expected run, round, end or raise")
    return typedjson.load(cls, data)


def read(path: Path) -> list[RunLog]:
    """Every run in the rollout, oldest first."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise BridgeError(f"cannot read the rollout {path}: {exc}") from exc
    return parse(raw, path)


def parse(raw: bytes, path: Path) -> list[RunLog]:
    """Every run in these rollout bytes (read from `path`, named in errors), oldest first."""
    lines = raw.decode("utf-8", "replace").split("\n")
    runs: list[RunLog] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            record = _record(surrogates.loads(text))
        except (ValueError, typedjson.Invalid) as exc:
            if all(not rest.strip() for rest in lines[number:]):
                break  # a torn last line: the write that made it never finished
            raise BridgeError(f"the rollout {path} is corrupt at line {number}: {exc}") from None
        if isinstance(record, RunHeader):
            runs.append(RunLog(record))
        elif not runs or runs[-1].header.run != record.run:
            raise BridgeError(f"the rollout {path} has a record of no run at line {number}")
        elif isinstance(record, RoundRecord):
            runs[-1].rounds.append(record)
        elif isinstance(record, RunRaise):
            runs[-1].raised(record)
        else:
            runs[-1].end = record
    return runs


def last_run(path: Path) -> RunLog | None:
    runs = read(path)
    return runs[-1] if runs else None
