"""Schema 1 → 2 → 3 → 4: state.json files written by released code load, and are saved in the
current schema (a common envelope and the style's own record, which repeats nothing of it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.paths import active_marker, project_dir
from autopilot_codex.state import SCHEMA_VERSION, migrate
from autopilot_codex.state_file import MIGRATIONS
from autopilot_codex.store import Store
from autopilot_codex.styles.autopilot.record import AutopilotRecord, of
from autopilot_codex.styles.ralph.record import RalphRecord
from autopilot_codex.styles.rounds import RoundsRecord

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "v1"
V2 = FIXTURE.parent / "v2"


def plant_v1(worktree: Path) -> Path:
    folder = project_dir(worktree)
    folder.mkdir(parents=True)
    text = (FIXTURE / "state.json").read_text().replace("@WORKTREE@", str(worktree))
    (folder / "state.json").write_text(text)
    shutil.copy(FIXTURE / "plan.json", folder / "plan.json")
    return folder


def test_a_v1_file_loads_as_an_autopilot_loop_owned_by_its_session(repo: Path) -> None:
    plant_v1(repo)
    state = Store(repo).load()
    assert state is not None
    assert (state.schema_version, state.style, state.owner) == (
        SCHEMA_VERSION,
        "autopilot",
        "session",
    )
    # Everything the v1 loop knew is still there.
    assert (state.goal, state.session_id, state.iteration) == ("write two files", "sess-v1", 1)
    assert (kept := of(state).last_review) is not None and kept.decision == "fix"
    assert [t.id for t in state.plan.tasks] == ["T1", "T2"]


def test_saving_a_migrated_loop_writes_the_current_schema_and_a_marker_with_style_and_owner(
    repo: Path,
) -> None:
    folder = plant_v1(repo)
    store = Store(repo)
    with store.locked():
        state = store.load()
        assert state is not None
        store.save(state)
    saved = json.loads((folder / "state.json").read_text())
    assert (saved["schema_version"], saved["style"], saved["owner"]) == (
        SCHEMA_VERSION,
        "autopilot",
        "session",
    )
    assert saved["autopilot"]["current_task"] == "T1" and "current_task" not in saved
    marker = json.loads(active_marker(repo).read_text())
    assert marker == {
        "worktree": str(repo),
        "session_id": "sess-v1",
        "style": "autopilot",
        "owner": "session",
    }


def test_migrate_steps_one_version_at_a_time_and_leaves_current_files_alone() -> None:
    assert migrate({"schema_version": 1})["schema_version"] == SCHEMA_VERSION
    current = {"schema_version": SCHEMA_VERSION, "style": "ralph", "owner": "driver"}
    assert migrate(dict(current)) == current


def test_a_file_from_a_newer_release_is_refused_not_moved(repo: Path) -> None:
    folder = plant_v1(repo)
    data = json.loads((folder / "state.json").read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    (folder / "state.json").write_text(json.dumps(data))
    with pytest.raises(BridgeError, match="newer autopilot-codex"):
        Store(repo).load()
    assert (folder / "state.json").exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("iteration", -5),
        ("budget_used_usd", -100.0),
        ("no_progress_streak", -1),
        ("budget_usd", 0),
        ("budget_usd", float("nan")),
        ("budget_used_usd", float("inf")),
        ("max_output_tokens", -1),
        ("owner", "anyone"),
    ],
)
def test_hand_edited_values_no_bridge_writes_are_refused(
    repo: Path, field: str, value: object
) -> None:
    folder = plant_v1(repo)
    data = migrate(json.loads((folder / "state.json").read_text()))
    (data["autopilot"] if field in data["autopilot"] else data)[field] = value
    (folder / "state.json").write_text(json.dumps(data))
    with pytest.raises(BridgeError, match=field):
        Store(repo).load()


# -- the keyed witness: loops from the release before it ----------------------------------------


def as_previous_release(repo: Path) -> Path:
    """A loop as the previous release left it: an unsealed witness, unsealed ledger lines, and
    no key in the state home yet (it is made by the first load of this release)."""
    import hashlib

    from autopilot_codex.paths import state_home

    folder = project_dir(repo)
    text = (folder / "state.json").read_text()
    plan = (folder / "plan.json").read_text()
    old = {
        "states": [hashlib.sha256(text.encode()).hexdigest()],
        "plan": hashlib.sha256(plan.encode()).hexdigest(),
        "last": text,
    }
    (folder / "witness.json").write_text(json.dumps(old) + "\n")
    lines = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    (folder / "events.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in e.items() if k != "mac"}) + "\n" for e in lines)
    )
    shutil.rmtree(state_home() / "secret")
    return folder


def _plan(repo: Path) -> None:
    from autopilot_codex.state import Plan, State, Task

    task = Task("T1", "one", ["a.txt"], ["write"], ["exists"], [])
    state = State(
        goal="g",
        plan=Plan("s", [task]),
        base_sha="0" * 40,
        worktree=str(repo),
        session_id="sess-old",
        own=AutopilotRecord(model="m", current_task="T1", task_base_sha="0" * 40),
    )
    store = Store(repo)
    with store.locked():
        store.save(state)
        store.append_event("plan", decision="running")


def test_a_loop_of_the_previous_release_is_taken_over_and_sealed_from_then_on(
    repo: Path,
) -> None:
    from autopilot_codex.errors import StateCorrupt

    _plan(repo)
    folder = as_previous_release(repo)
    store = Store(repo)
    with store.locked():
        state = store.load()
        assert state is not None and state.session_id == "sess-old"
        store.save(state.evolve(iteration=1))
        store.append_event("next")
    seen = json.loads((folder / "witness.json").read_text())
    assert seen["mac"] and seen["adopted"]
    # The old ledger lines stay as they were; new ones are sealed and checked.
    assert "mac" in json.loads((folder / "events.jsonl").read_text().splitlines()[-1])
    assert Store(repo).load() is not None
    # Taken over once: removing the sealed witness now is tampering, not an old loop.
    (folder / "witness.json").unlink()
    with pytest.raises(StateCorrupt, match="witness.json is missing"):
        Store(repo).load()


def test_an_old_looking_loop_written_after_the_key_was_made_is_not_taken_over(
    repo: Path,
) -> None:
    """The implementer cannot pass a forged state off as an old loop: only the states on disk
    when the key was made are old ones."""
    from autopilot_codex.errors import StateCorrupt
    from autopilot_codex.paths import state_home
    from autopilot_codex.witness_key import load

    _plan(repo)
    folder = as_previous_release(repo)
    load(state_home())  # the key is made (by any loop's hook) before the forgery
    data = json.loads((folder / "state.json").read_text())
    data["budget_usd"] = 9999.0
    text = json.dumps(data)
    (folder / "state.json").write_text(text)
    import hashlib

    old = {"states": [hashlib.sha256(text.encode()).hexdigest()], "plan": "", "last": text}
    (folder / "witness.json").write_text(json.dumps(old))
    with pytest.raises(StateCorrupt, match="not vouched for"):
        Store(repo).load()


def test_a_v1_loop_without_any_witness_is_taken_over_when_it_predates_the_key(
    repo: Path,
) -> None:
    plant_v1(repo)
    state = Store(repo).load()
    assert state is not None and state.goal == "write two files"


def test_a_look_at_a_worktree_with_no_loop_makes_no_key(repo: Path) -> None:
    from autopilot_codex.paths import state_home
    from autopilot_codex.witness_key import key_path

    assert Store(repo).load() is None
    assert not key_path(state_home()).exists()


def _no_new_ids(value: object) -> object:
    """A saved value without the finding ids schema 3 added (null on a v2 finding)."""
    if isinstance(value, list):
        return [_no_new_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _no_new_ids(v) for k, v in value.items() if not (k == "id" and v is None)}
    return value


def plant_v2(worktree: Path, style: str) -> Path:
    folder = project_dir(worktree)
    folder.mkdir(parents=True)
    text = (V2 / f"{style}.state.json").read_text().replace("@WORKTREE@", str(worktree))
    (folder / "state.json").write_text(text)
    if style == "autopilot":
        shutil.copy(V2 / "autopilot.plan.json", folder / "plan.json")
    else:
        # What ralph and rounds write for their plan: none.
        (folder / "plan.json").write_text('{"summary": "", "tasks": []}\n')
    return folder


def saved_again(worktree: Path) -> dict[str, object]:
    store = Store(worktree)
    with store.locked():
        state = store.load()
        assert state is not None
        store.save(state)
    data: dict[str, object] = json.loads(store.state_path.read_text())
    return data


def test_a_v2_autopilot_file_loads_whole_and_saves_as_an_envelope_and_its_record(
    repo: Path,
) -> None:
    before = json.loads((V2 / "autopilot.state.json").read_text())
    plant_v2(repo, "autopilot")
    state = Store(repo).load()
    assert state is not None and state.schema_version == SCHEMA_VERSION
    assert (of(state).current_task, of(state).completed_tasks, of(state).review_mode) == (
        "T2",
        ["T1"],
        "stop",
    )
    assert [r.decision for r in of(state).reviewed] == ["approve", "fix"]
    assert state.last_checks[0].status == "pass" and state.checks[0].command == "true"
    assert (state.budget_used_usd, state.session_id, state.wall) == (0.016, "sess-v2", "off")
    saved = saved_again(repo)
    record = saved["autopilot"]
    assert isinstance(record, dict)
    # Every v2 field is kept, in the envelope or the record, with the value it had.
    for name, value in before.items():
        if name in ("schema_version", "worktree", "updated_at", "wall_missing", "ralph"):
            continue
        assert _no_new_ids((record if name in record else saved)[name]) == value, name
    assert (
        "ralph" not in saved and "rounds" not in saved and saved["schema_version"] == SCHEMA_VERSION
    )


def test_a_v2_ralph_file_keeps_its_session_iteration_and_cap_once(repo: Path) -> None:
    plant_v2(repo, "ralph")
    state = Store(repo).load()
    assert state is not None and isinstance(state.own, RalphRecord)
    assert (state.session_id, state.iteration, state.max_iterations) == ("sess-r2", 2, 5)
    saved = saved_again(repo)
    ralph = saved["ralph"]
    assert isinstance(ralph, dict)
    assert not {"session_id", "iteration", "max_iterations", "budget_usd", "max_seconds"} & set(
        ralph
    )
    assert not {"started_at", "idle_stop_blocks"} & set(ralph)
    assert (ralph["prompt"], ralph["completion_promise"]) == ("keep going", "ALL DONE")
    assert (saved["session_id"], saved["iteration"], saved["max_iterations"]) == ("sess-r2", 2, 5)
    # A ralph loop has no plan, reviews or manager settings to store.
    assert "autopilot" not in saved and "current_task" not in saved and "model" not in saved


def test_a_v2_ralph_file_takes_its_own_copy_where_the_two_disagree(repo: Path) -> None:
    folder = plant_v2(repo, "ralph")
    data = json.loads((folder / "state.json").read_text())
    data["iteration"] = 1  # a v2 save copied the ralph record's number here; it was the truth
    (folder / "state.json").write_text(json.dumps(data))
    state = Store(repo).load()
    assert state is not None and state.iteration == 2


def test_a_v2_rounds_file_loads_as_a_driver_owned_loop(repo: Path) -> None:
    plant_v2(repo, "rounds")
    state = Store(repo).load()
    assert state is not None
    assert (state.style, state.owner, state.max_iterations) == ("rounds", "driver", 3)
    assert state.own == RoundsRecord(run_id="") and state.session_id == "driver-pid:26535"
    saved = saved_again(repo)
    assert saved["rounds"] == {"run_id": ""} and "autopilot" not in saved


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(current_task="T9"), "current_task: belongs in the autopilot record"),
        (lambda d: d["autopilot"].update(extra=1), "autopilot.extra"),
        (lambda d: d.pop("autopilot"), "autopilot"),
        (lambda d: d.update(ralph={"prompt": "x", "started_at": 0.0}), "ralph record"),
    ],
)
def test_a_v3_file_with_a_field_in_the_wrong_place_is_quarantined(
    repo: Path, change: object, message: str
) -> None:
    folder = plant_v2(repo, "autopilot")
    data = migrate(json.loads((folder / "state.json").read_text()))
    change(data)  # type: ignore[operator]
    (folder / "state.json").write_text(json.dumps(data))
    with pytest.raises(BridgeError, match=message):
        Store(repo).load()
    assert not (folder / "state.json").exists()


def test_a_ralph_record_that_repeats_the_envelope_is_refused(repo: Path) -> None:
    folder = plant_v2(repo, "ralph")
    data = migrate(json.loads((folder / "state.json").read_text()))
    data["ralph"]["iteration"] = 1
    (folder / "state.json").write_text(json.dumps(data))
    with pytest.raises(BridgeError, match="ralph.iteration"):
        Store(repo).load()


def test_every_state_field_has_one_place_in_the_file() -> None:
    """A field added to State lands in the envelope, one added to a style's record under the
    style's name; a style's record names no envelope field. The v2 step moves exactly the
    fields the autopilot record has into it, so no v2 field is lost or refused."""
    import dataclasses

    from autopilot_codex.state import State
    from autopilot_codex.state_file import V2_AUTOPILOT

    names = {f.name for f in dataclasses.fields(State)}
    for record in (AutopilotRecord, RalphRecord, RoundsRecord):
        assert not {f.name for f in dataclasses.fields(record)} & names, record
    assert list(V2_AUTOPILOT) == [f.name for f in dataclasses.fields(AutopilotRecord)]


def test_a_v3_ralph_file_moves_its_clock_stalls_and_caps_to_the_envelope(repo: Path) -> None:
    """Schema 3 (the release before) kept a ralph loop's budget, time cap, start and stall count
    in its record too; the record's were the truth, and its null budget was none."""
    folder = plant_v2(repo, "ralph")
    data = MIGRATIONS[2](json.loads((folder / "state.json").read_text()))
    assert data["schema_version"] == 3 and data["budget_usd"] == 5.0
    data["ralph"].update(max_seconds=600.0, idle_stop_blocks=2)
    (folder / "state.json").write_text(json.dumps(data))
    state = Store(repo).load()
    assert state is not None and state.own == RalphRecord("keep going", "ALL DONE", 3, 0)
    assert (state.budget_usd, state.max_seconds, state.idle_stop_blocks) == (0.0, 600.0, 2)
    assert state.started_epoch == 1796161074.1426525
    data["ralph"]["budget_usd"] = 2.5
    assert migrate(data)["budget_usd"] == 2.5
