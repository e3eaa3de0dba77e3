"""`watch`: the rows and frame of planted loops, and silence noticed, recorded once in the sealed
ledger and told to the user's `notify_command`. Ages come from a clock given to the readers or
from planted timestamps; nothing sleeps."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.commands.watch import SILENT, rows, sweep
from autopilot_codex.paths import project_dir, project_key
from autopilot_codex.store import Store
from tests.conftest import make_repo, plan_body
from tests.fakes.openai_server import FakeOpenAI

HOUR = 3600.0


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def plant(home: Path, where: Path, status: str, event_ts: str, **state: object) -> Path:
    folder = home / "projects" / project_key(where)
    folder.mkdir(parents=True)
    body = {
        "goal": "g",
        "status": status,
        "style": "autopilot",
        "worktree": str(where),
        "current_task": "T1",
        "budget_usd": 5.0,
        "budget_used_usd": 0.5,
        "iteration": 2,
        "max_iterations": 40,
        **state,
    }
    (folder / "state.json").write_text(json.dumps(body))
    (folder / "events.jsonl").write_text(json.dumps({"ts": event_ts, "event": "review"}) + "\n")
    return folder


def test_once_and_json_show_each_loop(
    isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(isolated, tmp_path / "a", "running", "2026-03-01T10:00:00+00:00")
    plant(isolated, tmp_path / "b", "done", "2026-03-01T09:00:00+00:00")
    code, out = cli(capsys, "watch", "--json", "--silence", "1000d")
    assert code == 0
    data = {Path(r["worktree"]).name: r for r in json.loads(out)}
    assert set(data) == {"a", "b"}
    a = data["a"]
    assert (a["status"], a["style"], a["task"], a["last_event"]) == (
        "running",
        "autopilot",
        "T1",
        "review",
    )
    # Both meters and their total, as `status` shows them (it once showed the manager's alone).
    spend = "manager $0.50 · implementer $0.00 · total $0.50 of $5.00"
    assert a["meters"] == {"spend": spend, "iterations": "2/40"}
    assert a["spend"]["total_usd"] == 0.5
    assert a["silent"] == [] and a["last_event_age_s"] > 0
    code, out = cli(capsys, "watch", "--once", "--silence", "1000d")
    assert code == 0 and "STATUS" in out and "running" in out and "$0.50 of $5.00" in out
    assert "SILENT" not in out


def test_here_shows_only_this_worktree(
    isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = make_repo(tmp_path / "a")
    plant(isolated, a, "running", "2026-03-01T10:00:00+00:00")
    plant(isolated, tmp_path / "b", "running", "2026-03-01T10:00:00+00:00")
    code, out = cli(capsys, "-C", str(a), "watch", "--json", "--here")
    assert code == 0 and [Path(r["worktree"]).name for r in json.loads(out)] == ["a"]


def test_silence_and_an_overdue_call_are_flagged(isolated: Path, tmp_path: Path) -> None:
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now - 2 * HOUR))
    call = {"kind": "review", "token": "t", "pid": 1, "generation": 1, "deadline": now - 5}
    plant(isolated, tmp_path / "quiet", "running", stamp, inflight=call)
    plant(isolated, tmp_path / "ended", "done", stamp)
    found = {Path(r.worktree).name: r for r in rows(now=now, silence_s=HOUR, here=None)}
    assert found["quiet"].silent == ["no ledger event for 2h", "review past its deadline"]
    assert found["quiet"].inflight == "review (overdue)"
    assert found["ended"].silent == []
    # Under the threshold the same loop is not silent, but its late call still is.
    found = {Path(r.worktree).name: r for r in rows(now=now, silence_s=3 * HOUR, here=None)}
    assert found["quiet"].silent == ["review past its deadline"]


def test_a_silent_loop_is_recorded_once_in_a_valid_ledger_and_told(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    told = tmp_path / "told.jsonl"
    script = tmp_path / "hook.py"
    script.write_text(
        "import sys\n"
        f"with open({str(told)!r}, 'a') as f:\n"
        "    f.write(sys.stdin.read().strip() + '\\t' + sys.argv[-1] + '\\n')\n"
    )
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "config.json").write_text(
        json.dumps({"notify_command": [sys.executable, str(script)]})
    )
    manager.enqueue(plan_body(1), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "--session-id", "s1", "one", "file")[0] == 0
    later = time.time() + 2 * HOUR
    (row,) = rows(now=later, silence_s=HOUR, here=None)
    assert row.silent and not row.recorded
    sweep([row])
    (again,) = rows(now=later, silence_s=HOUR, here=None)
    assert again.recorded == again.silent and again.last_event == row.last_event
    sweep([again])
    store = Store(repo)
    events = [e for e in store.tail_events(50) if e["event"] == SILENT]
    assert [e["kind"] for e in events] == ["quiet"]
    # The sealed ledger still verifies end to end, and the loop still loads.
    assert store.load() is not None
    store.audit()
    deadline = time.monotonic() + 60
    while not told.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    event_json, message = told.read_text().splitlines()[0].split("\t")
    assert json.loads(event_json)["event"] == SILENT and "no ledger event" in message


def test_a_state_naming_another_worktree_never_writes_there(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "--session-id", "s1", "one", "file")[0] == 0
    victim = project_dir(repo) / "events.jsonl"
    before = victim.read_bytes()
    stamp = "2026-03-01T10:00:00+00:00"
    plant(isolated, tmp_path / "liar", "running", stamp, worktree=str(repo))
    liar = [r for r in rows(silence_s=HOUR, here=None) if r.key == project_key(tmp_path / "liar")]
    assert liar and liar[0].silent
    sweep(liar)
    assert victim.read_bytes() == before


def test_notify_command_is_never_taken_from_the_environment(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex.config import load_config

    monkeypatch.setenv("AUTOPILOT_CODEX_NOTIFY_COMMAND", "/bin/sh")
    assert load_config().notify_command == ()


def test_a_session_writing_its_transcript_is_alive_and_one_that_stopped_is_not(
    isolated: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("{}\n")
    now = transcript.stat().st_mtime
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now - 2 * HOUR))
    cursor = {"path": str(transcript), "offset": 3, "seen": []}
    plant(isolated, tmp_path / "busy", "running", stamp, spend_cursors=[cursor])
    (row,) = rows(now=now, silence_s=HOUR, here=None)
    # No hook for two hours, but the host wrote the transcript just now: not silent.
    assert row.silent == [] and row.transcript_age_s is not None
    (row,) = rows(now=now + 2 * HOUR, silence_s=HOUR, here=None)
    assert row.silent == ["no ledger event or transcript write for 2h"]


def test_a_session_that_ended_is_flagged_as_recorded_by_its_hook(
    isolated: Path, tmp_path: Path
) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    folder = plant(isolated, tmp_path / "gone", "running", stamp, session_id="s1")
    ended = {"ts": stamp, "event": "session.ended", "session": "s1", "reason": "other"}
    with (folder / "events.jsonl").open("a") as handle:
        handle.write(json.dumps(ended) + "\n")
    (row,) = rows(silence_s=HOUR, here=None)
    assert row.silent == ["session ended (other) without a Stop"]
    assert row.recorded == row.silent
    # Another session's end is not this loop's.
    state = json.loads((folder / "state.json").read_text())
    (folder / "state.json").write_text(json.dumps({**state, "session_id": "s2"}))
    (row,) = rows(silence_s=HOUR, here=None)
    assert row.silent == []


def test_the_live_view_redraws_each_period_and_ends_on_an_interrupt(
    isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex.commands import watch as watching

    plant(isolated, tmp_path / "a", "running", "2026-03-01T10:00:00+00:00")
    periods: list[float] = []

    def one_period(seconds: float) -> None:  # the clock: the user presses ^C in the second
        periods.append(seconds)
        if len(periods) == 2:
            raise KeyboardInterrupt

    # `time.sleep` itself (the view's module holds `time`): nothing else runs in this test.
    monkeypatch.setattr("time.sleep", one_period)
    said = watching.watch(once=False, as_json_out=False, silence="1000d", here=None, every_s=2.5)
    assert said == "" and periods == [2.5, 2.5]


def ledger_lines(folder: Path, *events: dict[str, object]) -> Path:
    path = folder / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


@pytest.mark.parametrize("stamp", [12345, "last tuesday"], ids=["not-text", "not-a-time"])
def test_an_event_without_a_readable_time_is_aged_by_its_ledger_file(
    isolated: Path, tmp_path: Path, stamp: object
) -> None:
    import os

    folder = plant(isolated, tmp_path / "odd", "running", "unused")
    path = ledger_lines(folder, {"ts": stamp, "event": "review"})
    now = time.time()
    os.utime(path, (now - 2 * HOUR, now - 2 * HOUR))
    (row,) = rows(now=now, silence_s=HOUR, here=None)
    assert row.last_event == "review" and row.last_event_age_s == pytest.approx(2 * HOUR, abs=1)
    assert row.silent == ["no ledger event for 2h"]


def test_the_meters_show_what_the_state_holds_and_a_call_in_time_is_not_overdue(
    isolated: Path, tmp_path: Path
) -> None:
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now))
    folder = plant(isolated, tmp_path / "lean", "running", stamp)
    # A state of another style: no budget, no iteration cap, only its questions counted.
    lean = {
        "status": "running",
        "style": "ralph",
        "worktree": str(tmp_path / "lean"),
        "consultations_total": 3,
        "inflight": {"kind": "review", "deadline": now + HOUR},
        "reservations": [{"kind": "ask", "deadline": now + HOUR}, {"usd": 0.1}, "junk"],
    }
    (folder / "state.json").write_text(json.dumps(lean))
    (row,) = rows(now=now, silence_s=HOUR, here=None)
    assert row.meters == {"spend": "manager $0.00 · implementer $0.00 · total $0.00", "asked": "3"}
    assert row.inflight == "review, ask, call" and row.silent == []
    assert row.task == ""


def test_an_empty_machine_and_an_empty_ledger_are_shown_as_such(
    isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "watch", "--once")
    assert code == 0 and "│ no loops" in out
    assert cli(capsys, "watch", "--json")[1].strip() == "[]"
    folder = plant(isolated, tmp_path / "new", "running", "unused")
    ledger_lines(folder)
    (row,) = rows(silence_s=HOUR, here=None)
    assert row.last_event == "" and row.last_event_age_s is None
    assert row.silent == ["no ledger event yet"] and row.recorded == []
    code, out = cli(capsys, "watch", "--once", "--silence", "1000d")
    assert "no loops" not in out and "running SILENT: no ledger event" in out
    assert "- (- ago)" in out


def test_the_live_view_tells_the_terminal_of_a_new_silence_once(
    isolated: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from autopilot_codex.commands import watch as watching

    where = make_repo(tmp_path / "quiet")
    plant(isolated, where, "running", "2026-03-01T10:00:00+00:00")
    periods: list[float] = []

    def one_period(seconds: float) -> None:  # the clock: ^C in the third period
        periods.append(seconds)
        if len(periods) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr("time.sleep", one_period)
    capsys.readouterr()
    assert watching.watch(once=False, as_json_out=False, silence="1h", here=None, every_s=1) == ""
    out = capsys.readouterr().out
    # One notice, though the loop was silent at each of the three redraws: the first sweep
    # recorded it in the ledger.
    assert out.count("\x1b]9;autopilot-codex: ") == 1
    assert out.count("\x1b]777;notify;autopilot-codex;") == 1
    assert f"{where}: no ledger event for " in out
    silent = [e for e in Store(where).tail_events(10) if e["event"] == SILENT]
    assert [e["kind"] for e in silent] == ["quiet"]
