"""Steps: recorded inside a workflow (a second run of the workflow gets the record, the call is
not made again), plain calls outside one; the kill seam at the Nth step boundary."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from dbos import DBOS, SetWorkflowID

from autopilot_codex.durable import app, steps
from tests.conftest import ROOT

made: list[str] = []


def _call(x: str) -> str:
    made.append(x)
    return x.upper()


@DBOS.workflow(name="tests.durable.two_steps")
def _two_steps(x: str) -> list[str]:
    steps.publish("seen", x)
    return [steps.step("first", _call, x), steps.step("second", _call, x + "!")]


def test_outside_a_workflow_a_step_is_a_plain_call() -> None:
    made.clear()
    assert not steps.in_workflow()
    assert steps.step("any", _call, "a") == "A" and made == ["a"]
    steps.publish("nothing", 1)  # nowhere to keep it, nothing happens


def test_a_recorded_step_is_never_made_again(database_url: str) -> None:
    app.launch(database_url)
    made.clear()
    with SetWorkflowID("wf-steps"):
        assert _two_steps("b") == ["B", "B!"]
    assert made == ["b", "b!"]
    assert DBOS.get_event("wf-steps", "seen", timeout_seconds=0) == "b"
    names = [s["function_name"] for s in DBOS.list_workflow_steps("wf-steps")]
    assert [n for n in names if n in ("first", "second")] == ["first", "second"]
    # The same workflow again (as a recovery would run it): every step from the record.
    app.shutdown()
    app.launch(database_url)
    with SetWorkflowID("wf-steps"):
        assert _two_steps("b") == ["B", "B!"]
    assert made == ["b", "b!"]


_DIES = """
import sys
from dbos import DBOS, SetWorkflowID
from autopilot_codex.durable import app, steps

def say(line):
    print(line, flush=True)

@DBOS.workflow(name="tests.durable.dies")
def three():
    return [steps.step(f"s{i}", say, f"step {i}") for i in range(3)]

app.launch(sys.argv[1])
with SetWorkflowID("wf-dies"):
    three()
print("ended", flush=True)
"""


@pytest.mark.parametrize("n", [1, 3, 4])
def test_the_kill_seam_stops_the_process_right_after_its_nth_step(
    database_url: str, n: int
) -> None:
    env = {**os.environ, steps.DIE_AFTER_ENV: str(n)}
    done = subprocess.run(
        [sys.executable, "-c", _DIES, database_url],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )
    said = [line for line in done.stdout.splitlines() if line]
    if n <= 3:
        assert done.returncode == -signal.SIGKILL
        assert said == [f"step {i}" for i in range(n)]
    else:  # past the last step: the process ends on its own
        assert done.returncode == 0 and said[-1] == "ended"


def test_the_seam_is_off_without_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(steps.DIE_AFTER_ENV, "not a number")
    for _ in range(3):
        steps._boundary()  # not a number: this process goes on


_CUT = """
import os, signal, sys
from dbos import DBOS, SetWorkflowID
from autopilot_codex.durable import app, steps

def paid():
    before = steps.begun_before(), steps.begun_before()
    if sys.argv[2] == "die":
        os.kill(os.getpid(), signal.SIGKILL)  # after paying, before the step is recorded
    return before

@DBOS.workflow(name="tests.durable.cut")
def cut():
    return steps.step("paid", paid)

app.launch(sys.argv[1], "cut-executor")
with SetWorkflowID(sys.argv[3]):
    print(cut())
"""


def _paid() -> tuple[bool, bool]:
    return steps.begun_before(), steps.begun_before()


@DBOS.workflow(name="tests.durable.cut")
def _cut() -> tuple[bool, bool]:
    """The workflow `_CUT` runs, registered here too: recovery finds it by its name."""
    return steps.step("paid", _paid)


@pytest.mark.parametrize("dies", [False, True])
def test_a_step_cut_short_knows_it_began_before(database_url: str, dies: bool) -> None:
    """Recovered, the step runs again and learns its first execution got as far as each of
    its marks; a step never cut short never thinks so."""
    # The marks are counted per process and workflow id: one id per database too.
    wid = f"wf-cut-{dies}-{database_url.partition(':')[0]}"
    done = subprocess.run(
        [sys.executable, "-c", _CUT, database_url, "die" if dies else "live", wid],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )
    if not dies:
        assert done.stdout.strip() == "(False, False)", done.stderr
        return
    assert done.returncode == -signal.SIGKILL
    app.launch(database_url, "cut-executor")  # recovers the attempt cut short
    assert DBOS.retrieve_workflow(wid).get_result() == (True, True)
