"""The store's reads at their edges on a real loop: the markers put back from the copy that
survives when the state cannot say, a result file that is not a record, a ledger not there."""

from __future__ import annotations

import json
from pathlib import Path

from autopilot_codex.store import Store
from tests.conftest import make_repo
from tests.reliability.conftest import state_path


def test_markers_are_put_back_from_the_surviving_copy_when_the_state_is_gone(
    planned: Path,
) -> None:
    store = Store(planned)
    assert store.repair_markers() == ""  # both there and alike: nothing to do
    kept = store.rails.read_text()
    store.marker.unlink()
    state_path(planned).unlink()  # the state cannot say what the marker held
    store.repair_markers()
    assert store.marker.read_text() == kept and store.rails.read_text() == kept
    assert "rails.tampered" in [e["event"] for e in store.tail_events()]


def test_markers_that_no_copy_vouches_for_are_not_made_whole(planned: Path) -> None:
    store = Store(planned)
    store.marker.write_text("not a marker\n")
    store.rails.write_text('{"worktree": 3}\n')
    state_path(planned).unlink()
    assert store.repair_markers() == ""
    assert store.marker.read_text() == "not a marker\n"


def test_a_planted_marker_where_no_loop_ever_ran_is_left_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "never")
    store = Store(repo)
    store.marker.parent.mkdir(parents=True, exist_ok=True)
    store.marker.write_text(json.dumps({"worktree": str(repo)}) + "\n")
    assert store.repair_markers() == ""
    assert not store.rails.exists()
    assert store.tail_events() == []  # no ledger: no events, no error


def test_a_result_that_is_not_a_record_reads_as_none(planned: Path) -> None:
    store = Store(planned)
    assert store.load_result() is None
    for text in ("not json\n", "[1, 2]\n"):
        store.result_path.write_text(text)
        assert store.load_result() is None
    store.save_result({"status": "done"})
    assert store.load_result() == {"status": "done"}
