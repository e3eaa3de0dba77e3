"""The store's files at their edges, on a loop saved straight through `Store` (no hooks, no
manager): the lock, the witness writes it makes or spares, and files that are not what the
bridge wrote."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import fileio
from autopilot_codex.errors import BridgeError, LockTimeout, StateCorrupt
from autopilot_codex.state import Plan, State, Task
from autopilot_codex.store import Store
from autopilot_codex.styles.autopilot.record import AutopilotRecord


def _state(repo: Path, **changes: object) -> State:
    task = Task("T1", "one", ["a.txt"], ["write"], ["exists"], [])
    state = State(
        goal="g",
        plan=Plan("s", [task]),
        base_sha="0" * 40,
        worktree=str(repo),
        session_id="sess-1",
        own=AutopilotRecord(model="m", current_task="T1", task_base_sha="0" * 40),
    )
    return state.evolve(**changes)


def _running(repo: Path) -> Store:
    store = Store(repo)
    with store.locked():
        store.save(_state(repo))
        store.append_event("plan", decision="running")
    return store


def test_a_lock_let_go_without_appending_writes_no_witness(repo: Path) -> None:
    """The witness moves past lines appended under the lock, once, as it is let go; a lock
    taken and let go with nothing appended under it costs no write (an fsync per hook)."""
    store = _running(repo)
    store.append_event("outside the lock")
    before = store.witness_path.read_bytes()
    with store.locked():
        pass
    assert store.witness_path.read_bytes() == before
    with store.locked():
        store.append_event("inside")
    assert store.witness_path.read_bytes() != before
    # The same for a Store that appends before it ever takes the lock.
    fresh = Store(repo)
    fresh.append_event("outside, first")
    before = store.witness_path.read_bytes()
    with fresh.locked():
        pass
    assert store.witness_path.read_bytes() == before


def test_a_held_lock_is_waited_for_ten_seconds_by_default(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's `lock_timeout_s` default, for the commands that build a Store without the
    config's value. The clock is the test's: each wait moves it on."""
    store = _running(repo)
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    held = os.open(store.lock_path, os.O_RDWR)
    try:
        assert fileio._try_lock(held)
        with pytest.raises(LockTimeout, match="over 10s"), Store(repo).locked():
            pass
    finally:
        fileio.release(held)
        os.close(held)


def test_a_save_over_a_state_that_is_not_json_writes_the_new_one(repo: Path) -> None:
    store = _running(repo)
    store.state_path.write_text("{ not json")
    with store.locked():
        store.save(_state(repo, status="paused"))
    assert json.loads(store.state_path.read_text())["status"] == "paused"
    assert store.moved == []  # no status before it to tell the user of


def test_each_status_change_a_save_makes_is_kept_for_the_caller_to_tell(repo: Path) -> None:
    store = _running(repo)
    assert store.moved == []  # the first save has no status before it
    with store.locked():
        store.save(_state(repo))  # running again: no change
        paused = store.save(_state(repo, status="paused"))
    assert store.moved == [("running", paused)]


# A file that exists and cannot be read, even by root: reading /proc/self/mem at offset 0 fails.
_UNREADABLE = Path("/proc/self/mem")


def _denied(tmp_path: Path) -> Path:
    """A file this process may not read: a mode-0 file, or for root (whom no mode stops)
    another process's memory, when the kernel refuses it."""
    if os.geteuid() != 0:
        closed = tmp_path / "closed"
        closed.write_text("{}")
        closed.chmod(0)
        return closed
    try:
        Path("/proc/1/mem").read_bytes()
    except PermissionError:
        return Path("/proc/1/mem")
    except OSError:
        pass
    pytest.skip("no file this root process is denied")


def test_a_state_the_user_may_not_read_stays_where_it_is(repo: Path, tmp_path: Path) -> None:
    """Not corrupt: the file is fine, its permission is not (a re-plan costs money)."""
    store = _running(repo)
    store.state_path.unlink()
    store.state_path.symlink_to(_denied(tmp_path))
    with pytest.raises(BridgeError, match="permission denied") as raised:
        store.load()
    assert not isinstance(raised.value, StateCorrupt)
    assert store.state_path.is_symlink() and not list(store.dir.glob("state.json.corrupt-*"))


@pytest.mark.skipif(not _UNREADABLE.is_file(), reason="needs Linux's /proc")
def test_a_state_that_cannot_be_read_is_moved_aside(repo: Path) -> None:
    store = _running(repo)
    store.state_path.unlink()
    store.state_path.symlink_to(_UNREADABLE)
    with pytest.raises(StateCorrupt, match="unreadable"):
        store.load()
    assert not store.state_path.is_symlink()
    assert list(store.dir.glob("state.json.corrupt-*"))
    assert store.marker.exists()  # the rails stay


def test_a_state_planted_beside_a_plan_with_no_state_yet_is_quarantined(repo: Path) -> None:
    """A crash between the plan's write and the state's leaves a witness of the plan alone;
    a state.json that appears then has no last state of the bridge's to go back to."""
    store = Store(repo)
    store.save_plan(_state(repo).plan)
    store.state_path.write_text(_state(repo).to_json())
    with pytest.raises(StateCorrupt, match="changed outside the bridge"):
        Store(repo).load()
    assert not store.state_path.exists()
    assert list(store.dir.glob("state.json.changed-*"))
    assert "state.corrupt" in [e["event"] for e in store.tail_events()]


def test_a_done_save_takes_both_markers_off(repo: Path) -> None:
    store = _running(repo)
    assert store.marker.exists() and store.rails.exists()
    with store.locked():
        store.save(_state(repo, status="done"))
    assert not store.marker.exists() and not store.rails.exists()
    assert Store(repo).load() is not None  # the removal is the bridge's own, vouched for


def test_a_file_written_beside_the_state_is_in_the_loop_s_folder(repo: Path) -> None:
    store = _running(repo)
    store.write_beside("findings.json", "[]\n")
    assert (store.dir / "findings.json").read_text() == "[]\n"


def test_markers_are_repaired_without_reading_the_plan(repo: Path) -> None:
    """A removed copy of the marker (the rails' index) is put back from the state; a plan that
    is gone too is not the repair's business (the next load that needs it says so), so the
    state stays where it is."""
    store = _running(repo)
    kept = store.rails.read_text()
    store.plan_path.unlink()
    store.rails.unlink()
    assert store.repair_markers() == ""
    assert store.rails.read_text() == kept
    assert store.state_path.exists() and not list(store.dir.glob("state.json.corrupt-*"))


@pytest.mark.parametrize("text", ["[1, 2]\n", "{}\n", '{"schema_version": "3"}\n'])
def test_a_state_that_is_not_a_versioned_record_is_moved_aside(repo: Path, text: str) -> None:
    store = _running(repo)
    store.state_path.write_text(text)
    with pytest.raises(StateCorrupt):
        store.load()
    assert [p.read_text() for p in store.dir.glob("state.json.corrupt-*")] == [text]


def test_markers_in_step_are_no_repair_and_no_event(repo: Path) -> None:
    store = _running(repo)
    events = store.events_path.read_bytes()
    assert store.repair_markers() == ""
    assert store.events_path.read_bytes() == events  # no `rails.tampered` for nothing


def test_a_release_by_the_user_s_control_is_not_read_as_tampering(repo: Path) -> None:
    """`stop` and `cancel` take the rails off a loop whose state stays: the witness vouches
    for the markers' absence first."""
    store = _running(repo)
    with store.locked():
        store.release()
    assert not store.marker.exists() and not store.rails.exists()
    state = Store(repo).load()
    assert state is not None and state.status == "running"


def test_a_state_that_is_not_json_is_moved_aside_with_where_it_breaks(repo: Path) -> None:
    store = _running(repo)
    store.state_path.write_text('{"goal": "g",\n "status": ')
    with pytest.raises(StateCorrupt, match=r"not valid JSON \(Expecting value at line 2\)"):
        store.load()
    assert list(store.dir.glob("state.json.corrupt-*"))


def test_the_lock_file_is_the_user_s_alone(repo: Path) -> None:
    store = _running(repo)
    assert stat.S_IMODE(store.lock_path.stat().st_mode) == 0o600


def test_a_tampered_loop_is_stopped_at_what_it_had_spent(repo: Path) -> None:
    """The stopped state is the bridge's last one; no spend or iteration is added that the
    ledger does not show (the loop here spent nothing and ran none)."""
    store = _running(repo)
    data = json.loads(store.state_path.read_text())
    data["budget_usd"] = 999.0
    store.state_path.write_text(json.dumps(data))
    with pytest.raises(StateCorrupt, match="state.json was changed"):
        Store(repo).load()
    saved = json.loads(store.state_path.read_text())
    assert (saved["status"], saved["budget_usd"], saved["budget_used_usd"]) == ("stopped", 5.0, 0.0)
    assert saved["iteration"] == 0  # nor an iteration it never ran


def test_a_plan_of_an_adopted_loop_that_does_not_type_check_is_moved_aside(repo: Path) -> None:
    from tests.unit.test_migration import plant_v1

    folder = plant_v1(repo)
    (folder / "plan.json").write_text('{"summary": 1, "tasks": "none"}\n')
    with pytest.raises(StateCorrupt):
        Store(repo).load()
    assert list(folder.glob("state.json.corrupt-*"))


def test_a_paused_save_keeps_the_rails_when_one_index_still_marks_the_worktree(
    repo: Path,
) -> None:
    store = _running(repo)
    kept = store.marker.read_text()
    store.rails.unlink()
    with store.locked():
        store.save(_state(repo, status="paused"))
    assert store.rails.read_text() == store.marker.read_text() == kept


def test_the_plan_and_result_files_keep_the_user_s_own_characters(repo: Path) -> None:
    """Files a person reads (`status` points at them): text as written, not \\u escapes."""
    store = Store(repo)
    plan = _state(repo).plan
    store.save_plan(type(plan)("Écrire les fichiers — vite", plan.tasks))
    assert "Écrire les fichiers — vite" in store.plan_path.read_text(encoding="utf-8")
    store.save_result({"reason": "terminé"})
    assert "terminé" in store.result_path.read_text(encoding="utf-8")


def test_markers_come_back_from_the_copy_that_parses(repo: Path) -> None:
    store = _running(repo)
    kept = store.rails.read_text()
    store.marker.write_text("{ not a marker")
    store.state_path.unlink()
    store.repair_markers()
    assert store.marker.read_text() == kept and store.rails.read_text() == kept


def test_a_loop_whose_ledger_was_removed_anchors_its_new_ledger_after_the_next_save(
    repo: Path,
) -> None:
    """The ledger starts again with the tamper event; the next save anchors the witness at its
    end, so cutting that line off afterwards is noticed."""
    store = _running(repo)
    store.events_path.unlink()
    with store.locked(), pytest.raises(StateCorrupt, match="events.jsonl"):
        store.load()
    with store.locked():
        state = store.load()
        assert state is not None and state.status == "stopped"
        store.save(state)
    lines = store.events_path.read_text().splitlines(keepends=True)
    store.events_path.write_text("".join(lines[:-1]))
    with pytest.raises(StateCorrupt):
        Store(repo).load()


def test_a_hold_loads_once_and_seals_its_lines_with_its_save_in_one_witness_write(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Store.hold`: the lock taken and the loop loaded once; the lines the body leaves are
    written as it is let go, then the save, whose witness write anchors them: one write."""
    store = _running(repo)
    loads: list[bool] = []
    writes: list[int] = []
    load, write = Store.load, Store._write_witness

    def counting_load(self: Store, *, with_plan: bool = True) -> State | None:
        loads.append(with_plan)
        return load(self, with_plan=with_plan)

    def counting_write(self: Store, *args: object) -> None:
        writes.append(1)
        write(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "load", counting_load)
    monkeypatch.setattr(Store, "_write_witness", counting_write)
    with store.hold() as held:
        assert held.state is not None and held.state.goal == "g"
        held.lines.append(("ralph.continue", {"decision": "block"}))
        held.beside.append(("findings.json", '{"entries": []}\n'))
        held.save = held.state.evolve(iteration=3)
    assert loads == [False] and len(writes) == 1
    assert (store.dir / "findings.json").read_text() == '{"entries": []}\n'
    assert [e["event"] for e in store.tail_events(2)] == ["plan", "ralph.continue"]
    after = Store(repo).load(with_plan=False)
    assert after is not None and after.iteration == 3
    assert held.saved is not None and held.saved.iteration == 3


def test_a_hold_whose_body_raises_writes_nothing(repo: Path) -> None:
    """A body cut short leaves no line naming a state that was never saved, and no save."""
    store = _running(repo)
    before = store.witness_path.read_bytes()
    with pytest.raises(RuntimeError), store.hold() as held:
        assert held.state is not None
        held.lines.append(("ralph.continue", {"decision": "block"}))
        held.beside.append(("findings.json", '{"entries": []}\n'))
        held.save = held.state.evolve(iteration=3)
        raise RuntimeError("cut short")
    assert [e["event"] for e in store.tail_events()] == ["plan"]
    assert store.witness_path.read_bytes() == before
    assert not (store.dir / "findings.json").exists()
    after = Store(repo).load(with_plan=False)
    assert after is not None and after.iteration == 0


def test_readable_reads_the_plan_unless_told_not_to(repo: Path) -> None:
    """`stop` reads the loop whole; `cancel` asks for no plan (a state without one is fine)."""
    _running(repo)
    state = Store(repo).readable()
    assert state is not None and state.plan == _state(repo).plan
    bare = Store(repo).readable(with_plan=False)
    assert bare is not None and bare.plan != _state(repo).plan


def test_a_corrupt_state_is_none_to_readable(repo: Path) -> None:
    store = _running(repo)
    store.state_path.write_text("{ not json")
    assert Store(repo).readable() is None
    assert list(store.dir.glob("state.json.corrupt-*"))  # moved aside, as `load` does


def test_a_save_anchors_the_ledger_so_the_release_reads_it_no_second_time(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The save's witness is anchored past every line appended before it; letting the lock
    go then re-reads nothing (each verify reads the whole ledger, on every hook)."""
    from autopilot_codex import ledger

    store = _running(repo)
    verified: list[Path] = []
    real = ledger.verify

    def counted(path: Path, *args: Any, **kwargs: Any) -> Any:
        verified.append(path)
        return real(path, *args, **kwargs)

    with store.locked():
        store.append_event("before the save")
        store.save(_state(repo, status="paused"))
        monkeypatch.setattr(ledger, "verify", counted)
    assert verified == []
    with store.locked():
        store.append_event("after the save")
    assert verified == [store.events_path]  # a line appended after it: anchored at the release


def test_the_last_events_are_read_whole_when_the_window_starts_at_a_line(repo: Path) -> None:
    """`tail_events` reads a window from the end of the ledger (64 KiB for up to 49 events);
    when that window starts exactly at the first byte of one of the lines asked for, that line
    is read whole, not cut."""
    store = Store(repo)
    store.events_path.parent.mkdir(parents=True, exist_ok=True)
    size = 64 * 1024 // 4  # four lines fill the window exactly

    def line(n: int) -> bytes:
        head = json.dumps({"event": f"e{n}", "pad": ""})
        return (head[:-2] + "x" * (size - len(head) - 1) + '"}\n').encode()

    store.events_path.write_bytes(b"".join(line(n) for n in range(6)))
    assert all(len(line(n)) == size for n in range(6))
    assert [e["event"] for e in store.tail_events(4)] == ["e2", "e3", "e4", "e5"]
