"""One real Stop of each style, followed through the bridge's modules (issue 35: "a hook is
load → decide → commit", "a low, wide house").

Each Stop runs in this process from the entrance (`gate.hook_main`, stdin and argv as a host
gives them) with `sys.setprofile`, which sees every Python call and return. What is counted:

- **modules**: the bridge modules a call entered, in the order first entered. A module's
  first import (its body, and what that calls) is not a visit. A door (`DOORS`: the store, git,
  the sandbox, the shadow history, a manager backend, the hosts, the checks, the settings, the
  autopilot hooks' `Effects`) counts as one module with everything it calls: what a door does
  inside is its own business, not the Stop's path. The leaves (`LEAVES`) are left out: they
  call no bridge module back and hold no state of the loop, and every floor uses them (a JSON
  codec, the one atomic write, the error types, paths, the records with their methods), so
  counting them would measure the bridge's own standard library, not the Stop's path.
- **entries**: a call whose frame is in module M while the nearest bridge frame below it is in
  another module: M is *entered from outside*. M is *left* when its last frame on the stack
  returns. A **re-entry** is an entry into M after M was left: the Stop came back to a module
  it had finished with (the shaft: down, up, down again). The figure is their total over the
  Stop; the design's floor is one entry per module, which a door with several calls (the store
  under `Effects`: load, save, the ledger) does not reach, so the bound below is a ratchet.
  A `with` block is one call of its context manager: the block's end resuming the manager's
  suspended generator (from `contextlib`'s `__exit__`, the same frame the `with` entered) is
  that call finishing, not an entry (a hold: the lock and the load as it begins, the writes as
  it ends). A call into the module while the block runs is an entry like any other.
- **loads per lock hold**: `Store.load` calls between entering and leaving `Store.locked()`;
  every hold of the Stop loads the state at most once.
- **lock holds**: how many times the Stop takes the loop's lock. A Stop that calls the manager
  takes it twice at the least (take the slot; apply the answer): the lock is never held across
  the call, so a typed `stop` never waits for it.
"""

from __future__ import annotations

import inspect
import io
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import autopilot_codex
from autopilot_codex.manager import Outcome
from autopilot_codex.state import Plan, ReviewRecord, State, Task, planless
from autopilot_codex.store import Store
from autopilot_codex.styles.autopilot.record import AutopilotRecord, evolve, of
from tests.conftest import git, make_repo, payload

PACKAGE = Path(autopilot_codex.__file__).resolve().parent
LEAVES = frozenset(
    {
        "typedjson",
        "fileio",
        "regular",
        "errors",
        "paths",
        "nofollow",
        "output",
        "registry",
        "defaults",
        "contract",
        "spend",
        # The seatbelt's note on an unguarded loop's banner: text, no imports at all.
        "seatbelt",
        # The records: data with methods (evolve, task) that call no bridge module back.
        "state",
        "state_ranges",
        "styles.autopilot.record",
        "hookio",
        # Part of the JSON codec at the doors where outside JSON comes in: strings in and out.
        "surrogates",
        # A style's decision: the `Answer` it carries and its event's name, with constructors.
        "decision",
        "admitted",
        "checks.records",
    }
)
# A module's first import runs its body: the bridge's code run then is not the Stop's path.
IMPORT = "<import>"
# The effects behind one door each: what a door does inside is its own (the store's files,
# ledger and witness; git's runner and sandbox; a backend's retries), one module of the path.
DOORS = frozenset(
    {
        "store",
        "gitrepo",
        "sandbox",
        "shadow",
        "manager",
        "hosts",
        "checks",
        "config",
        # The autopilot hooks' door to git, the clock and the manager (its lambdas call git).
        "styles.autopilot.effects",
    }
)


def module_of(frame: FrameType) -> str | None:
    name = frame.f_code.co_filename
    if not name.startswith(str(PACKAGE)):
        return None
    rel = Path(name).resolve().relative_to(PACKAGE).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts) or "autopilot_codex"


def _ends_with_block(frame: FrameType) -> bool:
    """Whether a generator is resumed by `contextlib`'s `__exit__`: a `with` block ending."""
    back = frame.f_back
    return (
        back is not None
        and back.f_code.co_name == "__exit__"
        and Path(back.f_code.co_filename).name == "contextlib.py"
    )


def unit_of(module: str) -> str:
    """A door's package counts as one module: `gitrepo.runner` is `gitrepo`."""
    top = module.split(".")[0]
    return top if top in DOORS else module


@dataclass
class Trace:
    order: list[str] = field(default_factory=list)
    active: dict[str, int] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)
    reentries: dict[str, int] = field(default_factory=dict)
    holds: list[int] = field(default_factory=list)
    loads_outside: int = 0
    # The witness writes made in each hold (`Store._write_witness`): one per hold at most.
    witness: list[int] = field(default_factory=list)
    # The unit each live bridge frame counts for (by id), so what a door calls is the door's.
    frames: dict[int, str] = field(default_factory=dict)
    # The generator frames suspended in a `with` block (by id, with the frame and its unit).
    suspended: dict[int, tuple[FrameType, str]] = field(default_factory=dict)
    _in_lock: int = 0

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return"):
            return
        module = module_of(frame)
        if module is None or module in LEAVES:
            return
        if event == "return":
            self._returned(frame)
            return
        if self._resumed(frame):
            return
        caller = self._caller(frame)
        if frame.f_code.co_name == "<module>" or caller == IMPORT:
            self.frames[id(frame)] = IMPORT
            return
        unit = caller if caller in DOORS else unit_of(module)
        if caller != unit and not self.active.get(unit):
            if unit in self.left:
                self.reentries[unit] = self.reentries.get(unit, 0) + 1
            if unit not in self.order:
                self.order.append(unit)
        self.frames[id(frame)] = unit
        self.active[unit] = self.active.get(unit, 0) + 1

    def _returned(self, frame: FrameType) -> None:
        unit = self.frames.pop(id(frame), None)
        if unit is not None and frame.f_code.co_flags & inspect.CO_GENERATOR:
            self.suspended[id(frame)] = (frame, unit)
        if unit is not None and unit != IMPORT:
            self.active[unit] -= 1
            if self.active[unit] == 0:
                self.left.add(unit)

    def _resumed(self, frame: FrameType) -> bool:
        """The end of a `with` block: the call that began it goes on, no new entry."""
        resumed = self.suspended.pop(id(frame), None)
        if resumed is None or resumed[0] is not frame or not _ends_with_block(frame):
            return False
        self.frames[id(frame)] = resumed[1]
        if resumed[1] != IMPORT:
            self.active[resumed[1]] = self.active.get(resumed[1], 0) + 1
        return True

    def _caller(self, frame: FrameType) -> str | None:
        back = frame.f_back
        while back is not None:
            unit = self.frames.get(id(back))
            if unit is not None:
                return unit
            back = back.f_back
        return None

    @property
    def climbs(self) -> int:
        return sum(self.reentries.values())


@contextmanager
def counted_loads(trace: Trace, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Store.load, Store.locked and the witness's writes, counted: what each hold does."""
    load, locked, write = Store.load, Store.locked, Store._write_witness

    def counting_write(self: Store, *args: Any, **kwargs: Any) -> Any:
        # The store's own flag: the anchor written as the lock is let go counts for its hold.
        if self._holding:
            trace.witness[-1] += 1
        return write(self, *args, **kwargs)

    def counting_load(self: Store, *args: Any, **kwargs: Any) -> Any:
        if trace._in_lock:
            trace.holds[-1] += 1
        else:
            trace.loads_outside += 1
        return load(self, *args, **kwargs)

    @contextmanager
    def counting_locked(self: Store, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with locked(self, *args, **kwargs) as held:
            if not trace._in_lock:
                trace.holds.append(0)
                trace.witness.append(0)
            trace._in_lock += 1
            try:
                yield held
            finally:
                trace._in_lock -= 1

    monkeypatch.setattr(Store, "load", counting_load)
    monkeypatch.setattr(Store, "locked", counting_locked)
    monkeypatch.setattr(Store, "_write_witness", counting_write)
    yield


def traced_stop(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Trace, dict[str, Any]]:
    """One Stop through the entrance, traced; the host's answer as JSON."""
    from autopilot_codex import gate

    raw = json.dumps(payload("Stop", repo)).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    trace = Trace()
    capsys.readouterr()
    with counted_loads(trace, monkeypatch):
        sys.setprofile(trace)
        try:
            code = gate.hook_main(["Stop", "--host", "claude"])
        finally:
            sys.setprofile(None)
    out = capsys.readouterr().out
    assert code == 0
    return trace, (json.loads(out) if out.strip() else {})


def autopilot_loop(repo: Path, **changes: Any) -> Store:
    store = Store(repo)
    task = Task("T1", "write file1", ["file1.txt"], ["write it"], ["it exists"], [])
    head = git(repo, "rev-parse", "HEAD")
    state = State(
        goal="g",
        plan=Plan("p", [task]),
        base_sha=head,
        worktree=str(repo),
        session_id="sess-1",
        own=AutopilotRecord(model="m", current_task="T1", task_base_sha=head, review_mode="stop"),
    )
    state = evolve(state, **changes)
    with store.locked():
        store.save_plan(state.plan)
        store.save(state)
    return store


class FakeManager:
    """An in-process manager: answers every call with `value`, free."""

    def __init__(self, value: object) -> None:
        self.value = value
        self.calls = 0

    def __call__(self, model: str, config: object) -> FakeManager:
        return self

    def ask(self, schema: type[Any], instructions: str, prompt: str) -> Outcome[Any]:
        self.calls += 1
        return Outcome(self.value)


# The ratchet: each style's Stop at most this many modules and re-entries (measured when the
# Stop became load → decide → commit; before it: autopilot with a cached review 22 modules,
# 49 re-entries, 3 lock holds; with a verdict call 25, 83, 6 holds, one loading twice; ralph
# 14, 14; rounds 10, 2). The aim is 12 modules and no re-entry: lower these as the
# path shortens, never raise them (raised once, by one module and a few re-entries
# each, when the loop index, the hosts' roster and the style records joined the path; lowered
# when the entrance came to enter each of its modules once and ralph to decide in one call,
# then when the autopilot Stop's step modules were folded into their owners, git's facts came
# through `Effects` once per hold and the decision record became a record of its own: from
# 23 / 39 and 24 / 58; then when the entrance came to look its host up in a table, the
# implementer's spend to be charged in one call into the host's wing (`hosts.charge`, with no
# frame of the style's context), ralph to read its clock and cap in one call, each autopilot
# hold to be one call of `Effects` (the loop loaded, claimed and charged as the lock is taken,
# the lines and the save written as it is let go) and each autopilot step one call of the
# module that owns it: from 20 / 24, 22 / 44, 13 / 11 and 9 / 2; then when a `with` block
# came to count as one call of its door and ralph's hold to be one `Store.hold`: from 19 / 6,
# 22 / 17 and 12 / 6; then when the autopilot Stop read the finding ledger once for its pause
# and its replay, took its slot only to go on (with the call's worst case on it) and its
# budget guard read the meters once: from 19 / 5 and 22 / 15; then when the entrance stopped
# building a store for the style, whose first use builds it (ralph's one hold, autopilot's
# door, none for rounds): from 18 / 2, 22 / 14, 12 / 2 and 9 / 0; then when the autopilot
# door came to be built as its first hold is taken: from 17 / 2 and 21 / 14; then when Claude
# Code's and Codex's answers came to be written by one writer beside the reading they share,
# shaped by each host's table: from 17 / 1, 21 / 13, 12 / 1 and 8 / 0; then when the
# autopilot hold came to carry the hook's limits, the record its banner's spending text and
# the door to read the finding ledger with git's facts: from 16 / 1 and 20 / 13; then when
# the autopilot style's hooks became a table that hands the Stop to `stop` in one hop: from
# 14 / 1 and 18 / 11). What is
# left: the autopilot door asked for git's facts once no guard has answered (a guard stop
# runs no git), and a verdict's rules asked in both holds (docs/architecture.md).
BOUNDS = {
    "autopilot cached": (13, 1),
    "autopilot verdict": (17, 11),
    "ralph": (12, 0),
    "rounds": (7, 0),
}
# The entrance: gate → loop index → helper → hookrun, each entered once; the styles' and the
# hosts' registries are tables (no frame of their own), so the host is entered only when asked
# for something (its spend, its answer's dialect), and a Stop answered resets the crash count
# in hookrun.
ENTRANCE = ["gate", "loopindex", "helper", "hookrun"]


def judged(name: str, trace: Trace) -> None:
    FIGURES(report(name, trace))
    modules, reentries = BOUNDS[name]
    assert len(trace.order) <= modules, report(name, trace)
    assert trace.climbs <= reentries, report(name, trace)
    # Load → decide → commit: every hold loads the state once, and only under the lock.
    assert all(loads <= 1 for loads in trace.holds), trace.holds
    # The ledger's lines first, then the save seals them: one witness write per hold.
    assert all(writes <= 1 for writes in trace.witness), report(name, trace)
    assert trace.loads_outside == 0
    assert trace.order[:4] == ENTRANCE
    assert not any(trace.reentries.get(module) for module in ENTRANCE), report(name, trace)
    # The host's wing is entered where the hook asks it for something, in one call each: its
    # spend (a style's charge) on the way in, its dialect's answer on the way out.
    assert trace.reentries.get("hosts", 0) <= 1, report(name, trace)
    assert "styles" not in trace.order and "failclosed" not in trace.order


def report(name: str, trace: Trace) -> str:
    return (
        f"{name}: {len(trace.order)} modules {trace.order}; re-entries {trace.climbs} "
        f"{sorted(trace.reentries.items())}; lock holds {len(trace.holds)}, loads per hold "
        f"{trace.holds}, loads outside a hold {trace.loads_outside}, witness writes per hold "
        f"{trace.witness}"
    )


def FIGURES(line: str) -> None:  # noqa: N802 - the figures, seen with `pytest -s`
    print(line)


def test_autopilot_stop_with_a_cached_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex import gitrepo
    from autopilot_codex.styles.autopilot.effects import diff_key

    repo = make_repo(tmp_path / "repo")
    store = autopilot_loop(repo)
    (repo / "file1.txt").write_text("one\n")
    state = store.load(with_plan=False)
    assert state is not None
    key = diff_key(
        gitrepo.diff_since(
            repo, of(state).task_base_sha, exclude=store.excluded(), baseline=store.nested_path
        )
    )
    cached = ReviewRecord(key, "fix", "needs a fix", reason="fix file1.txt")
    with store.locked():
        store.save(evolve(state, reviewed=[cached]))
    trace, answer = traced_stop(repo, monkeypatch, capsys)
    judged("autopilot cached", trace)
    assert answer["decision"] == "block" and "fix file1.txt" in answer["reason"]
    # Decided from the cache in the hold that took the slot, and released in it.
    assert len(trace.holds) == 1
    assert "manager" not in trace.order


def test_autopilot_stop_with_a_manager_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex import hookrun
    from autopilot_codex.manager.schemas import Verdict

    repo = make_repo(tmp_path / "repo")
    autopilot_loop(repo, review_mode="off")
    manager = FakeManager(
        Verdict(
            decision="continue",
            reason="go on",
            current_task_done=False,
            instructions="",
            findings=[],
        )
    )
    monkeypatch.setattr(hookrun, "selected_manager", manager)
    trace, answer = traced_stop(repo, monkeypatch, capsys)
    judged("autopilot verdict", trace)
    assert manager.calls == 1 and answer["decision"] == "block"
    # The floor of a Stop that calls the manager: take the slot (and reserve the call), then
    # apply the answer; the lock is not held across the call, so a typed `stop` never waits.
    assert len(trace.holds) == 2


def test_ralph_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.cli import main

    repo = make_repo(tmp_path / "repo")
    assert main(["-C", str(repo), "ralph", "--session-id", "sess-1", "go"]) == 0
    trace, answer = traced_stop(repo, monkeypatch, capsys)
    judged("ralph", trace)
    assert answer["decision"] == "block"
    assert len(trace.holds) == 1


def test_rounds_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    store = Store(repo)
    state = planless(
        goal="g",
        worktree=str(repo),
        head=git(repo, "rev-parse", "HEAD"),
        style="rounds",
        owner="driver",
    )
    with store.locked():
        store.save(state)
    trace, answer = traced_stop(repo, monkeypatch, capsys)
    judged("rounds", trace)
    # The driver decides a round's end: its Stop only passes the rails, and takes no lock.
    assert answer == {} and trace.holds == []
    # The aim reached: no module entered twice.
    assert trace.climbs == 0, report("rounds", trace)
    assert len(trace.order) <= 12


def test_a_with_block_is_one_call_of_its_door_and_a_call_inside_it_an_entry(
    tmp_path: Path,
) -> None:
    """What the trace counts of a hold: its begin and its end are one call of the door; a
    call into the door while the block runs is an entry like any other (here a re-entry)."""
    store = Store(make_repo(tmp_path / "repo"))
    trace = Trace()
    sys.setprofile(trace)
    try:
        with store.hold():
            pass
        with store.hold():
            store.tail_events()
    finally:
        sys.setprofile(None)
    # The first hold enters the store; the second comes back to it, and so does the call
    # made inside it. The blocks' ends add nothing.
    assert trace.order == ["store"] and trace.reentries == {"store": 2}
