"""Where `run --resume` takes a run from: a run begun before runs were durable has only its
file, which the first attempt starts from; a finished attempt's successor starts from the
record the database holds, whatever the file says since."""

from __future__ import annotations

import math
from pathlib import Path

from dbos import DBOS

from autopilot_codex.durable import app
from autopilot_codex.lanes import flow
from autopilot_codex.lanes.budget import Amount, Budget
from autopilot_codex.lanes.driver import home_of
from autopilot_codex.lanes.record import LanesRun, TaskState, save
from autopilot_codex.paths import project_key
from tests.conftest import git, task
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.lanes.helpers import RUN, begun, integration
from tests.integration.test_lanes import lanes, states


def _merged_run(repo: Path) -> LanesRun:
    """A run whose one task merged before its driver stopped (`incomplete` on its file)."""
    spec = task(1, depends_on=[])
    one = TaskState("T1", "t", [], "Task T1: t", spec=spec, state="merged")
    return LanesRun(
        run=RUN,
        goal="g",
        implementer="claude",
        manager="openai",
        lanes=1,
        user_branch="main",
        user_sha=git(repo, "rev-parse", "main"),
        budget=Budget(Amount(1.0, math.inf, math.inf)),
        tasks=[one],
        integration=integration(repo),
        status="incomplete",
    )


def test_a_run_older_than_the_database_resumes_from_its_file(
    tmp_path: Path, manager: FakeOpenAI, database_url: str
) -> None:
    repo = begun(tmp_path)
    save(home_of(repo), _merged_run(repo))
    assert flow.pending(repo) is None  # no database yet: nothing under way, nothing made
    code, record = lanes(repo, "--resume")
    assert (code, record["status"], states(record)) == (0, "complete", {"T1": "merged"})
    app.launch(database_url)
    attempts = DBOS.list_workflows(workflow_id_prefix=flow.prefix(project_key(repo), RUN))
    assert [a.workflow_id.rsplit(":", 1)[1] for a in attempts] == ["1"]
    assert manager.requests == []


def test_the_next_attempt_starts_from_the_database_not_the_file(
    tmp_path: Path, manager: FakeOpenAI, database_url: str
) -> None:
    repo = begun(tmp_path)
    run = _merged_run(repo)
    run.tasks[0].state = "pending"
    run.budget = Budget(Amount(0.0, math.inf, math.inf))  # fits no lane: ends on its budget
    save(home_of(repo), run)
    code, record = lanes(repo, "--resume")
    assert (code, record["status"]) == (2, "budget"), record
    # The file is edited after the attempt ended: the next attempt reads the database.
    edited = _merged_run(repo)
    save(home_of(repo), edited)
    code, record = lanes(repo, "--resume")
    assert (code, record["status"]) == (2, "budget"), record
    assert states(record) == {"T1": "pending"}
