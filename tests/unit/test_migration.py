"""Schema 1 → 2: a state.json written by the released code loads, and is saved as schema 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.paths import active_marker, project_dir
from autopilot_codex.state import SCHEMA_VERSION, migrate
from autopilot_codex.store import Store

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "v1"


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
    assert (state.schema_version, state.style, state.owner) == (2, "autopilot", "session")
    # Everything the v1 loop knew is still there.
    assert (state.goal, state.session_id, state.iteration) == ("write two files", "sess-v1", 1)
    assert state.last_review is not None and state.last_review.decision == "fix"
    assert [t.id for t in state.plan.tasks] == ["T1", "T2"]


def test_saving_a_migrated_loop_writes_schema_2_and_a_marker_with_style_and_owner(
    repo: Path,
) -> None:
    folder = plant_v1(repo)
    store = Store(repo)
    with store.locked():
        state = store.load()
        assert state is not None
        store.save(state)
    saved = json.loads((folder / "state.json").read_text())
    assert (saved["schema_version"], saved["style"], saved["owner"]) == (2, "autopilot", "session")
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
        ("owner", "anyone"),
    ],
)
def test_hand_edited_values_no_bridge_writes_are_refused(
    repo: Path, field: str, value: object
) -> None:
    folder = plant_v1(repo)
    data = json.loads((folder / "state.json").read_text())
    data.update({field: value, "schema_version": 2, "style": "autopilot", "owner": "session"})
    data[field] = value
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
        goal="g", plan=Plan("s", [task]), current_task="T1", base_sha="0" * 40,
        task_base_sha="0" * 40, worktree=str(repo), model="m", session_id="sess-old",
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
