"""The one door to DBOS: where its database is, one launch per process, a clean shutdown."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbos import DBOS

from autopilot_codex.durable import app

calls: list[int] = []


@DBOS.step()
def _counted(x: int) -> int:
    calls.append(x)
    return x + 1


@DBOS.workflow()
def _doubled(x: int) -> int:
    return _counted(x) * 2


def test_the_default_database_is_a_sqlite_file_under_the_state_home(isolated: Path) -> None:
    assert app.database_url() == f"sqlite:///{isolated / 'durable' / 'system.sqlite'}"


def test_the_environment_names_a_shared_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(app.DATABASE_URL_ENV, " postgresql://u@db.example/ap ")
    assert app.database_url() == "postgresql://u@db.example/ap"


def test_launch_is_idempotent_and_a_workflow_runs(isolated: Path) -> None:
    try:
        first = app.launch()
        assert first == app.Launched(app.database_url(), app.LOCAL_EXECUTOR)
        assert app.launch() == first
        assert DBOS.executor_id == app.LOCAL_EXECUTOR
        assert _doubled(3) == 8
        # The folder is made private, as the rest of the state home.
        assert (isolated / "durable").stat().st_mode & 0o777 == 0o700
    finally:
        app.shutdown()
    assert app.current() is None


def test_another_database_or_executor_relaunches(database_url: str, tmp_path: Path) -> None:
    app.launch(database_url, "exec-a")
    assert DBOS.executor_id == "exec-a"
    other = f"sqlite:///{tmp_path / 'other.sqlite'}"
    launched = app.launch(other, "exec-b")
    assert launched == app.Launched(other, "exec-b") == app.current()
    assert DBOS.executor_id == "exec-b"
    assert (tmp_path / "other.sqlite").exists()


def test_a_completed_workflow_is_not_run_again(database_url: str) -> None:
    from dbos import SetWorkflowID

    app.launch(database_url)
    calls.clear()
    with SetWorkflowID("wf-once"):
        assert _doubled(5) == 12
    app.shutdown()
    app.launch(database_url)
    with SetWorkflowID("wf-once"):
        assert _doubled(5) == 12
    assert calls == [5]
