"""No interleaving spends past the cap: every manager call reserves its worst case under the
lock before it is made, and every budget guard counts what is reserved. A reservation whose
process died never blocks the loop: it is reclaimed (its worst case charged).

Parallel `ask` processes against the fake server, which holds its answer until every process
has either reached it or been refused: the overlap is forced, never left to timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.paths import project_dir
from autopilot_codex.store import Store
from autopilot_codex.styles.autopilot import caps
from tests.conftest import plan_body
from tests.fakes.openai_server import FakeOpenAI, LoggedRequest, Reply

# Generous: only reached when the code under test is broken (a process that never ends).
PATIENCE_S = 120.0


def consultation() -> dict[str, Any]:
    return {"answer": "Use util.py.", "confidence": "high", "plan_change": None}


def events(repo: Path) -> list[dict[str, Any]]:
    path = project_dir(repo) / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def ask_process(repo: Path, question: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "autopilot_codex", "-C", str(repo), "ask", question],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ),
    )


def plan(repo: Path, manager: FakeOpenAI) -> None:
    from autopilot_codex.cli import main

    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--budget", "5", "build", "it"]) == 0


def worst_case(repo: Path, manager: FakeOpenAI) -> float:
    """What one `ask` reserves here: learned from a refusal, which records it exactly."""
    set_budget(repo, lambda used: used + 1e-6)
    proc = ask_process(repo, "question 0")
    proc.communicate(timeout=PATIENCE_S)
    refused = [e for e in events(repo) if e["event"] == "ask.refused"]
    assert refused, "a budget that fits nothing must refuse the question"
    return float(refused[-1]["estimate_usd"])


def set_budget(repo: Path, budget: Any) -> float:
    """The user's own change of the cap (what `resume --budget` does), through the bridge."""
    store = Store(repo)
    with store.locked():
        state = store.load()
        assert state is not None
        new = budget(state.budget_used_usd)
        store.save(state.evolve(budget_usd=new))
    return float(new)


def test_parallel_asks_never_spend_past_the_budget(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    plan(repo, manager)
    capsys.readouterr()
    worst = worst_case(repo, manager)
    # Room for one worst case, not for two.
    budget = set_budget(repo, lambda used: used + 1.5 * worst)
    done = threading.Event()
    arrived: list[LoggedRequest] = []

    def hold(request: LoggedRequest) -> Reply:
        arrived.append(request)
        # Answer once every process has reached the server or been refused.
        while not done.wait(0.05):
            refused = sum(e["event"] == "ask.refused" for e in events(repo)) - 1
            if len(arrived) + refused >= 3:
                break
        return Reply(body=consultation())

    manager.responder = hold
    procs = [ask_process(repo, f"question {n}") for n in (1, 2, 3)]
    try:
        outs = [p.communicate(timeout=PATIENCE_S)[0] for p in procs]
    finally:
        done.set()
    answered = [o for o in outs if o.startswith("Manager's answer")]
    refused = [o for o in outs if "not asked: " in o]
    assert len(answered) == 1, outs
    assert len(refused) == 2, outs
    for out in refused:
        assert "reserved by a manager call in flight" in out, out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["budget_used_usd"] <= budget
    assert state.get("reservations", []) == []
    assert state["status"] == "running"


def test_a_reservation_of_a_killed_process_is_reclaimed_not_held_forever(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    plan(repo, manager)
    capsys.readouterr()
    reached = threading.Event()
    release = threading.Event()

    def hang(request: LoggedRequest) -> Reply:
        reached.set()
        release.wait(PATIENCE_S)
        return Reply(body=consultation())

    manager.responder = hang
    victim = ask_process(repo, "question 1")
    try:
        assert reached.wait(PATIENCE_S), "the ask never reached the manager"
        held = json.loads((project_dir(repo) / "state.json").read_text())["reservations"]
        assert len(held) == 1 and held[0]["pid"] == victim.pid and held[0]["usd"] > 0
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=PATIENCE_S)  # and its pipes closed
    finally:
        release.set()
    used = json.loads((project_dir(repo) / "state.json").read_text())["budget_used_usd"]
    # The dead process's reservation: charged at its worst case, then gone.
    manager.responder = None
    manager.enqueue(Reply(body=consultation()), schema="Consultation")
    proc = ask_process(repo, "question 2")
    out = proc.communicate(timeout=PATIENCE_S)[0]
    assert out.startswith("Manager's answer"), out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["reservations"] == []
    assert state["budget_used_usd"] >= used + held[0]["usd"]
    assert "ask.reclaimed" in [e["event"] for e in events(repo)]


# -- the rules, as table tests over the pure functions --------------------------------------------


def _state(**changes: Any) -> Any:
    from autopilot_codex.state import planless

    return planless(goal="g", worktree="/w", head="0" * 40, style="autopilot", **changes)


def test_a_hanging_live_process_keeps_its_reservation_until_its_deadline() -> None:
    from autopilot_codex.styles.autopilot import inflight

    hanging = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        state = inflight.reserve_call(
            _state(budget_usd=1.0), 0.4, pid=hanging.pid, token="t", now=1000.0, timeout_s=60
        )
        held = state.reservations[0]
        assert held.start  # its start time, so a reused pid is not taken for it
        kept, gone = inflight.reclaim_reservations(state, 1000.0 + 60)
        assert gone == [] and kept == state
        late, gone = inflight.reclaim_reservations(state, held.deadline + 1)
        assert gone == [held] and late.reservations == [] and late.budget_used_usd == 0.4
    finally:
        hanging.kill()
        hanging.wait()


def test_a_reused_pid_does_not_keep_a_dead_caller_s_reservation() -> None:
    from autopilot_codex.styles.autopilot import inflight

    state = inflight.reserve_call(
        _state(budget_usd=1.0), 0.3, pid=os.getpid(), token="t", now=0.0, timeout_s=60
    )
    held = state.reservations[0]
    other = state.evolve(reservations=[held.evolve(start="1")])  # another process, same pid
    assert inflight.reclaim_reservations(other, 1.0)[1] == [held.evolve(start="1")]
    assert inflight.reclaim_reservations(state, 1.0)[1] == []


@pytest.mark.parametrize(
    ("used", "slot", "asks", "estimate", "outcome"),
    [
        (0.0, 0.0, [], 0.5, None),
        (0.6, 0.0, [], 0.5, "stopped_budget"),  # spent out: the loop stops
        (0.0, 0.6, [], 0.5, "held"),  # a review's worst case in flight
        (0.0, 0.0, [0.3, 0.3], 0.5, "held"),  # two questions in flight
        (0.2, 0.0, [0.3], 0.5, None),  # exactly what is left
    ],
)
def test_every_budget_guard_counts_what_is_in_flight(
    used: float, slot: float, asks: list[float], estimate: float, outcome: str | None
) -> None:
    from autopilot_codex.state import Inflight, Reservation

    state = _state(
        budget_usd=1.0,
        budget_used_usd=used,
        inflight=Inflight("review", "s", 1, 1, 0.0, 9e9, reserved_usd=slot) if slot else None,
        reservations=[Reservation(f"t{n}", 1, usd, 9e9) for n, usd in enumerate(asks)],
    )
    blocked = caps.budget_guard(state, estimate, "x.budget", now=None)
    if outcome is None:
        assert blocked is None
    elif outcome == "held":
        assert blocked is not None and blocked[0] == state  # the loop goes on
        assert "reserved by a manager call in flight" in blocked[1].reason
    else:
        assert blocked is not None and blocked[0].status == outcome


def test_a_stop_s_verdict_counts_an_ask_in_flight(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Stop's budget guard sees the question's reservation: the verdict waits, the loop is
    not stopped for a budget that is only held."""
    from autopilot_codex.cli import main
    from tests.conftest import payload, run_hook_inproc

    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "build", "it"]) == 0
    capsys.readouterr()
    worst = worst_case(repo, manager)
    set_budget(repo, lambda used: used + 1.5 * worst)
    reached = threading.Event()
    release = threading.Event()

    def hold(request: LoggedRequest) -> Reply:
        if request.schema_name == "Consultation":
            reached.set()
            release.wait(PATIENCE_S)
            return Reply(body=consultation())
        return Reply(status=500)

    manager.responder = hold
    asking = ask_process(repo, "question 1")
    try:
        assert reached.wait(PATIENCE_S), "the ask never reached the manager"
        out = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch).json
    finally:
        release.set()
    assert "decision" not in out  # the turn ends; nothing was judged
    assert "reserved by a manager call in flight" in out["systemMessage"]
    assert manager.requests_for(schema="Verdict") == []
    assert asking.communicate(timeout=PATIENCE_S)[0].startswith("Manager's answer")
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["status"] == "running" and state["reservations"] == []
