"""`autopilot-codex ask`: a paid, bounded consultation that is not an iteration.

Real git repositories, the real `openai` client against the fake server, the CLI in-process.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import guards
from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from autopilot_codex.store import Store
from tests.conftest import git, payload, plan_body, run_hook_inproc, state_of, verdict_body
from tests.fakes.openai_server import FakeOpenAI, LoggedRequest, Reply


def consultation(**extra: Any) -> dict[str, Any]:
    return {
        "answer": "Use the existing helper in util.py.",
        "confidence": "high",
        "plan_change": None,
        **extra,
    }


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def events(repo: Path) -> list[dict[str, Any]]:
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def start(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], *flags: str) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "build", "the", "thing", *flags)
    assert code == 0, out


def asks(manager: FakeOpenAI) -> list[LoggedRequest]:
    return manager.requests_for(schema="Consultation")


def test_ask_answers_with_the_task_context(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    (repo / "file1.txt").write_text("half done\n")
    before = state_of(repo)["budget_used_usd"]
    manager.enqueue(
        consultation(plan_change="Split T2 into parser and printer."), schema="Consultation"
    )
    code, out = run(capsys, "-C", str(repo), "ask", "which helper should I reuse?")
    assert code == 0, out
    assert out.startswith(
        "Manager's answer (confidence high):\nUse the existing helper in util.py."
    )
    assert (
        "Suggested plan change (the manager decides; do not edit the plan): "
        "Split T2 into parser and printer." in out
    )
    assert "consultation 1 of 3 for task T1" in out and "not an iteration" in out
    prompt = asks(manager)[0].prompt_text
    assert "build the thing" in prompt and "Task T1 (1/2): task number 1" in prompt
    assert "which helper should I reuse?" in prompt
    assert "<<<DATA DIFF" in prompt and "+half done" in prompt
    state = state_of(repo)
    assert state["budget_used_usd"] > before
    assert (
        state["autopilot"]["consultations"],
        state["autopilot"]["consultations_task"],
        state["autopilot"]["consultations_total"],
    ) == (
        1,
        "T1",
        1,
    )
    ask = [e for e in events(repo) if e["event"] == "ask"]
    assert len(ask) == 1 and ask[0]["decision"] == "answered"
    assert ask[0]["tokens_in"] == 1000 and ask[0]["tokens_out"] == 200 and ask[0]["cost_usd"] > 0
    assert "Consultations: 1 this task, 1 in all (ask)" in run(capsys, "-C", str(repo), "status")[1]


def test_ask_reads_the_question_from_stdin(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start(repo, manager, capsys)
    monkeypatch.setattr(sys, "stdin", io.StringIO("is the --strict flag\nin scope?\n"))
    manager.enqueue(consultation(), schema="Consultation")
    code, out = run(capsys, "-C", str(repo), "ask", "-")
    assert code == 0, out
    assert "is the --strict flag\nin scope?" in asks(manager)[0].prompt_text
    assert "Suggested plan change" not in out


def test_ask_is_not_an_iteration(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start(repo, manager, capsys, "--session-id", "sess-1")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    stop = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    assert stop.json["decision"] == "block"
    before = state_of(repo)
    counters = (before["iteration"], before["autopilot"]["no_progress_streak"])
    assert (*counters, before["idle_stop_blocks"]) == (1, 1, 1)
    manager.enqueue(consultation(), schema="Consultation")
    code, out = run(capsys, "-C", str(repo), "ask", "--session-id", "sess-1", "a question")
    assert code == 0, out
    after = state_of(repo)
    loop_fields = (
        "status",
        "iteration",
        "no_progress_streak",
        "idle_stop_blocks",
        "stop_events",
        "tool_events",
        "current_task",
        "last_verdict",
        "generation",
    )
    # The envelope and the autopilot record (schema 3), side by side.
    after, before = {**after, **after["autopilot"]}, {**before, **before["autopilot"]}
    assert {k: after[k] for k in loop_fields} == {k: before[k] for k in loop_fields}
    assert after["budget_used_usd"] > before["budget_used_usd"]


def test_ask_refused_by_the_budget_keeps_the_loop_running(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start(repo, manager, capsys, "--budget", "0.2")
    before = state_of(repo)
    # Room for a long answer makes the worst case dearer than what is left of $0.20.
    monkeypatch.setenv("AUTOPILOT_CODEX_MAX_OUTPUT_TOKENS", "20000")
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1
    assert out.startswith("autopilot-codex: not asked: budget used up") and out.count("\n") == 1
    assert asks(manager) == []
    assert state_of(repo) == before
    assert events(repo)[-1]["event"] == "ask.refused"


def test_ask_stops_at_the_cap_per_task(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    for n in range(1, 4):
        manager.enqueue(consultation(), schema="Consultation")
        code, out = run(capsys, "-C", str(repo), "ask", f"question {n}")
        assert code == 0 and f"consultation {n} of 3" in out
    code, out = run(capsys, "-C", str(repo), "ask", "one more")
    assert code == 1
    assert "not asked: 3 of 3 consultations for task T1 are used" in out
    assert len(asks(manager)) == 3
    assert state_of(repo)["status"] == "running"


@pytest.mark.parametrize(
    ("replies", "charged"),
    [
        ([Reply(status=500)] * 3, False),
        ([Reply(text="not json"), Reply(text="still not json")], True),
    ],
    ids=["http-500", "invalid-twice"],
)
def test_manager_trouble_is_no_answer_and_no_status_change(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    replies: list[Reply],
    charged: bool,
) -> None:
    start(repo, manager, capsys)
    monkeypatch.setenv("AUTOPILOT_CODEX_TIMEOUT_S", "10")
    before = state_of(repo)
    manager.enqueue(*replies, schema="Consultation")
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1
    assert out.startswith("autopilot-codex: no answer: ") and out.count("\n") == 1
    after = state_of(repo)
    assert after["status"] == "running" and after["stop_reason"] is None
    assert (after["budget_used_usd"] > before["budget_used_usd"]) is charged
    assert after["autopilot"]["consultations"] == 1
    ask = [e for e in events(repo) if e["event"] == "ask"]
    assert ask[-1]["decision"] == "failed" and ask[-1]["error"]


def test_no_loop_and_a_loop_not_running_are_refused(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1 and out == (
        "autopilot-codex: not asked: no loop in this worktree; ask works only while a loop runs\n"
    )
    start(repo, manager, capsys)
    run(capsys, "-C", str(repo), "stop")
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1 and "not asked: the loop is stopped, not running" in out
    assert asks(manager) == []


def test_another_sessions_loop_is_refused(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start(repo, manager, capsys, "--session-id", "sess-1")
    code, out = run(capsys, "-C", str(repo), "ask", "--session-id", "sess-2", "a question")
    assert code == 1 and "not asked: the loop here belongs to another session" in out
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-2")
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1 and "another session" in out
    assert asks(manager) == [] and state_of(repo)["autopilot"]["consultations_total"] == 0
    manager.enqueue(consultation(), schema="Consultation")
    assert run(capsys, "-C", str(repo), "ask", "--session-id", "sess-1", "mine")[0] == 0


def test_a_driver_owned_loop_accepts_any_session(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "--session-id", "sess-1")
    store = Store(repo)
    with store.locked():
        state = store.load()
        assert state is not None
        store.save(state.evolve(owner="driver"))
    manager.enqueue(consultation(), schema="Consultation")
    code, out = run(capsys, "-C", str(repo), "ask", "--session-id", "round-7", "a question")
    assert code == 0, out


def test_an_answer_for_a_loop_stopped_meanwhile_is_not_given(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    store = Store(repo)

    def stop_then_answer(request: LoggedRequest) -> Reply:
        # The user stops the loop while the manager is thinking.
        with store.locked():
            state = store.load()
            assert state is not None
            store.save(guards.stop(state, "user stop"))
        return Reply(body=consultation())

    manager.responder = stop_then_answer
    before = state_of(repo)["budget_used_usd"]
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1 and "no answer: the loop was stopped while the manager answered" in out
    after = state_of(repo)
    assert after["status"] == "stopped" and after["budget_used_usd"] > before
    assert events(repo)[-1]["decision"] == "discarded"


def test_costs_come_from_the_loops_settings(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_PROMPT_CHARS", "30000")
    code, out = run(capsys, "-C", str(repo), "ask", "--costs")
    assert code == 0
    # The prompt counts a token a byte (the true ceiling), 30,001 tokens, and the retry adds
    # its note's 2,200 (it was 10,001 tokens and no note: $0.12 and $0.48):
    # gpt-6.2-sol: 2 x (30,001 tokens x $2/M + 4,000 x $10/M) + 2,200 x $2/M = $0.20
    assert "| autopilot-codex ask | up to $0.20 |" in out
    assert "| settle it yourself | $0 | none |" in out
    assert "1 of 30 iterations" in out
    start(repo, manager, capsys, "--model", "gpt-6.2-astra", "--max-iterations", "9")
    code, out = run(capsys, "-C", str(repo), "ask", "--costs")
    # gpt-6.2-astra: 2 x (30,001 x $8/M + 4,000 x $40/M) + 2,200 x $8/M = $0.82
    assert "| autopilot-codex ask | up to $0.82 |" in out and "1 of 9 iterations" in out
    assert "3 left for task T1" in out and "Budget: $0.0" in out
    assert git(repo, "status", "--porcelain") == ""


def test_an_ask_interrupted_mid_call_gives_its_reservation_back_charged(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C (or any failure) while the manager thinks: the reservation goes, and its worst
    case is charged, since whether the call was billed is unknown."""
    from autopilot_codex.commands.ask import ask

    start(repo, manager, capsys)
    before = state_of(repo)["budget_used_usd"]

    class Interrupted:
        def ask(self, *args: Any) -> Any:
            held = state_of(repo)["reservations"]
            assert len(held) == 1 and held[0]["usd"] > 0
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ask(cwd=repo, question="q", session_id=None, manager=lambda model, config: Interrupted())
    after = state_of(repo)
    assert after["reservations"] == [] and after["status"] == "running"
    interrupted = [e for e in events(repo) if e.get("decision") == "interrupted"]
    assert len(interrupted) == 1
    assert after["budget_used_usd"] == pytest.approx(
        before + interrupted[0]["charged_usd"], abs=1e-6
    )


def test_an_answered_ask_leaves_no_reservation(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    manager.enqueue(consultation(), schema="Consultation")
    assert run(capsys, "-C", str(repo), "ask", "a question")[0] == 0
    assert state_of(repo)["reservations"] == []


def test_an_answer_for_a_loop_removed_meanwhile_is_not_given(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)

    def remove_then_answer(request: LoggedRequest) -> Reply:
        # The state goes while the manager is thinking (removed outside the bridge).
        (project_dir(repo) / "state.json").unlink()
        return Reply(body=consultation())

    manager.responder = remove_then_answer
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1 and "no answer: the loop was removed while the manager answered" in out
    orphaned = [e for e in events(repo) if e.get("decision") == "orphaned"]
    assert len(orphaned) == 1 and orphaned[0]["cost_usd"] > 0
    assert "Use the existing helper" not in out


def test_an_ask_interrupted_after_its_loop_was_removed_charges_nothing(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.commands.ask import ask

    start(repo, manager, capsys)

    class RemovedThenInterrupted:
        def ask(self, *args: Any) -> Any:
            (project_dir(repo) / "state.json").unlink()
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ask(cwd=repo, question="q", session_id=None, manager=lambda m, c: RemovedThenInterrupted())
    assert not (project_dir(repo) / "state.json").exists()
    assert [e for e in events(repo) if e.get("decision") == "interrupted"] == []


def test_a_dead_askers_reservation_is_charged_even_when_the_ask_is_refused(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An earlier `ask` overran its deadline (its process gone): its worst case is charged
    when the next ask reclaims the slot, and stays charged though this ask is refused."""
    from autopilot_codex.state import Reservation
    from tests.conftest import edit_state

    start(repo, manager, capsys, "--budget", "0.2")
    before = state_of(repo)["budget_used_usd"]
    held = Reservation(token="t-old", pid=999_999_999, usd=0.05, deadline=1.0)
    edit_state(repo, reservations=[held])
    monkeypatch.setenv("AUTOPILOT_CODEX_MAX_OUTPUT_TOKENS", "20000")
    code, out = run(capsys, "-C", str(repo), "ask", "a question")
    assert code == 1 and out.startswith("autopilot-codex: not asked: budget used up")
    assert asks(manager) == []
    after = state_of(repo)
    assert after["reservations"] == [] and after["status"] == "running"
    assert after["budget_used_usd"] == pytest.approx(before + 0.05)
    reclaimed = [e for e in events(repo) if e["event"] == "ask.reclaimed"]
    assert [(e["pid"], e["charged_usd"]) for e in reclaimed] == [(999_999_999, 0.05)]
    assert events(repo)[-1]["event"] == "ask.refused"


def test_a_dead_askers_reservation_is_charged_at_the_next_stop(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from autopilot_codex.state import Reservation
    from tests.conftest import edit_state

    manager.enqueue(plan_body(2), schema="Plan")
    assert run(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "goal")[0] == 0
    held = Reservation(token="t-old", pid=999_999_999, usd=0.05, deadline=1.0)
    edit_state(repo, reservations=[held])
    before = state_of(repo)["budget_used_usd"]
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    after = state_of(repo)
    assert after["reservations"] == []
    (reclaimed,) = [e for e in events(repo) if e["event"] == "ask.reclaimed"]
    assert (reclaimed["pid"], reclaimed["charged_usd"], reclaimed["session"]) == (
        999_999_999,
        0.05,
        "sess-1",
    )
    # Charged the reservation's worst case, and the verdict's own cost.
    assert after["budget_used_usd"] > before + 0.05
