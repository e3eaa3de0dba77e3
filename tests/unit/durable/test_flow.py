"""The workflow's edges: which attempt to start, waiting for one that ended elsewhere, an
attempt this executor would never recover, and where a database is to be asked at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS, SetWorkflowID

from autopilot_codex.durable import app
from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes import flow
from autopilot_codex.lanes.begin import LanesOptions


@DBOS.workflow(name="tests.durable.ended")
def _ended(result: dict[str, Any]) -> dict[str, Any]:
    return result


def test_only_a_sqlite_file_not_made_is_not_asked(tmp_path: Path) -> None:
    assert not app.database_exists(f"sqlite:///{tmp_path / 'none.sqlite'}")
    assert app.database_exists("postgresql://u@db.example/ap")


def test_an_attempt_that_ended_elsewhere_is_read_from_the_database(database_url: str) -> None:
    app.launch(database_url)
    for wid, result in (("w-ok", {"status": "complete"}), ("w-err", {"error": "no branch"})):
        with SetWorkflowID(wid):
            _ended(result)
    assert flow._wait("w-ok") == {"status": "complete"}
    with pytest.raises(BridgeError, match="no branch"):
        flow._wait("w-err")


def test_a_new_run_in_the_same_second_gets_its_own_id(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app.launch(database_url)
    monkeypatch.setattr(flow, "new_run_id", lambda: "lanes-same")
    with SetWorkflowID(flow.prefix("k", "lanes-same") + "1"):
        _ended({})
    wid, args = flow._next(LanesOptions(worktree=tmp_path), "k", tmp_path)
    assert wid == flow.prefix("k", "lanes-same-2") + "1"
    assert args is not None and args[1] == "lanes-same-2"


def test_an_attempt_of_another_executor_is_not_waited_for(
    database_url: str, tmp_path: Path
) -> None:
    app.launch(database_url, "elsewhere")
    wid = flow.prefix("k", "r") + "1"
    with SetWorkflowID(wid):
        _ended({})
    # Recorded ended: nothing under way; the guard is asked of an id directly.
    app.launch(database_url, flow.executor("k"))
    with pytest.raises(BridgeError, match="executor elsewhere"):
        flow._recoverable(wid, "k")
    flow._recoverable("no-such-workflow", "k")  # nothing known: nothing to refuse
