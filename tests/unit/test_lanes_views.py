"""The lanes run in `watch`, `logs` and the report, rendered from a record written as the
driver writes it; and a missing, corrupt or hand-edited record as one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.commands.logs import NO_LANES
from autopilot_codex.commands.report import report
from autopilot_codex.lanes.budget import Amount, Budget, cap
from autopilot_codex.lanes.driver import home_of
from autopilot_codex.lanes.history import events
from autopilot_codex.lanes.record import NAME, LanesRun, TaskState, save
from autopilot_codex.lanes.view import lane_log, lines, story
from tests.conftest import cli

T0 = 1_800_000_000.0
# id, state, started and ended (seconds after T0), spend, rounds, attempts, why, follows
ROWS = [
    ("T1", "merged", 0, 10, 0.5, 2, 1, "merged as 0123456789ab", ""),
    ("T2", "refused", 1, 20, 0.25, 1, 1, "refused (conflict): T2.txt <b>both</b>", ""),
    ("T2-fix1", "landing", 21, 30, 0.1, 1, 1, "", "T2"),
    ("T3", "dropped", 2, 5, 0.0, 0, 2, "silent past its timeout; its branch is kept", ""),
]


def task(tid: str, state: str, **extra: object) -> TaskState:
    fields: dict[str, object] = {"title": f"make {tid}.txt", "depends_on": [], "contract": ""}
    return TaskState(id=tid, state=state, **(fields | extra))  # type: ignore[arg-type]


def record(**extra: object) -> LanesRun:
    budget = Budget(cap(3.0, 0, 0.0))
    budget.charge(Amount(1.25, 0.0, 0.0))
    tasks = [
        task(i, s, started=T0 + a, ended=T0 + b, usd=u, rounds=r, attempts=n, why=w, follows=f)
        for i, s, a, b, u, r, n, w, f in ROWS
    ]
    tasks.append(task("T4", "pending"))
    fields: dict[str, object] = {
        "run": "lanes-1",
        "goal": "the goal",
        "implementer": "claude",
        "manager": "openai",
        "lanes": 2,
        "user_branch": "main",
        "user_sha": "0" * 40,
        "budget": budget,
        "tasks": tasks,
        "queue": ["T2-fix1"],
        "status": "running",
    }
    return LanesRun(**(fields | extra))  # type: ignore[arg-type]


def test_each_lane_and_the_queue_as_the_views_show_them(repo: Path) -> None:
    save(home_of(repo), record())
    assert lines(repo) == [
        "Lanes run lanes-1: running, 2 at most, spent $1.25 of $3.00",
        "  T1         merged   round 2  $0.50  make T1.txt",
        "  T2         refused  round 1  $0.25  make T2.txt",
        "  T2-fix1    landing  round 1  $0.10  make T2-fix1.txt",
        "  T3         dropped  round 0  $0.00  make T3.txt",
        "  T4         pending  round 0  $0.00  make T4.txt",
        "  queue: T2-fix1",
    ]


def test_the_story_tells_starts_landings_refusals_stops_follow_ups_and_the_end() -> None:
    told = [(e.lane, e.kind, e.text) for e in events(record(status="incomplete", why="T3 dropped"))]
    assert told == [
        ("T1", "started", "started: make T1.txt"),
        ("T2", "started", "started: make T2.txt"),
        ("T3", "started", "started (attempt 2): make T3.txt"),
        ("T3", "dropped", "dropped: silent past its timeout; its branch is kept"),
        ("T1", "merged", "merged as 0123456789ab"),
        ("T2", "refused", "refused (conflict): T2.txt <b>both</b>"),
        ("T2", "follow-up", "follow-up T2-fix1: make T2-fix1.txt"),
        ("T2-fix1", "started", "started: make T2-fix1.txt"),
        ("run", "incomplete", "incomplete: T3 dropped"),
    ]
    # A running run has no end yet; a follow-up of a task the record lost is told first.
    orphan = record(tasks=[task("X-fix1", "pending", follows="X")])
    assert [(e.at, e.kind) for e in events(orphan)] == [(0.0, "follow-up")]
    # An end without words is its kind alone.
    assert [e.text for e in events(record(tasks=[], status="budget"))] == ["budget"]
    shown = story(orphan)
    assert shown == [
        "Lanes run lanes-1: the goal",
        "- X follow-up X-fix1: make X-fix1.txt",
    ]


def test_logs_show_the_lanes_events_and_one_lanes_own_log(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    assert (
        cli(capsys, "logs", "--lanes")[1].strip()
        == "No lanes run here: `run --lanes N` starts one."
    )
    assert "No lanes run here" in cli(capsys, "logs", "--lane", "T1")[1]
    run = record()
    save(home_of(repo), run)
    for argv in (("logs", "--lanes"), ("logs",)):  # an empty ledger shows the lanes run
        code, out = cli(capsys, *argv)
        assert code == 0 and "T2 refused (conflict): T2.txt <b>both</b>" in out, out
        assert "T1 merged as 0123456789ab" in out and "T2 follow-up T2-fix1: make" in out
    log = lane_log(repo, run, "T1")
    log.parent.mkdir(parents=True)
    log.write_text("Round 1: claude\nRound 2: claude\nDone.\n")
    code, out = cli(capsys, "logs", "--lane", "T1", "-n", "2")
    assert out.splitlines()[1:] == ["Round 2: claude", "Done."]
    assert out.startswith(f"Lane T1 (merged), {log}:")
    assert "Lane T2 (refused) has written no log yet." in cli(capsys, "logs", "--lane", "T2")[1]
    out = cli(capsys, "logs", "--lane", "nope")[1]
    assert "No lane 'nope' in lanes run lanes-1 (its tasks: T1, T2, T2-fix1, T3, T4)." in out


def test_watch_once_shows_each_lane_and_the_queue_below_the_loops(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    assert "Lanes run" not in cli(capsys, "watch", "--once")[1]
    save(home_of(repo), record(tasks=[task("T[b]1", "merged", title="[bold]x[/bold]")]))
    code, out = cli(capsys, "watch", "--once")
    # The repository's folder holds only its lanes run: no loop row, the lanes below.
    assert code == 0 and "no loops" in out, out
    assert "Lanes run lanes-1: running, 2 at most, spent $1.25 of $3.00" in out
    # A title is the record's text, never rich markup.
    assert "  T[b]1      merged   round 0  $0.00  [bold]x[/bold]" in out
    assert "  queue: T2-fix1" in out


def test_the_report_page_holds_the_lanes(repo: Path) -> None:
    save(home_of(repo), record(status="incomplete", finish="your branch was left"))
    said = report(cwd=str(repo), out=str(repo.parent / "page.html"))
    assert said.startswith("Report: ")
    page = (repo.parent / "page.html").read_text()
    assert '<section id="lanes">' in page and "<code>lanes-1</code>: incomplete" in page
    assert "your branch was left" in page
    assert (
        '<tr class="lane-merged"><td><code>T1</code> make T1.txt</td><td>merged</td><td>2</td><td>$0.50</td><td><code>0123456789ab</code></td>'
        in page
    )
    assert "(follow-up for <code>T2</code>)" in page
    assert "Waiting to land: T2-fix1." in page
    # The queue's outcomes, the record's words escaped.
    assert (
        '<li class="queue-refused"><code>T2</code> refused (conflict): T2.txt &lt;b&gt;both&lt;/b&gt;</li>'
        in page
    )
    assert '<li class="queue-follow-up"><code>T2</code> follow-up T2-fix1: make T2-fix1.txt' in page
    assert "<b>both</b>" not in page


@pytest.mark.parametrize(
    "text",
    ["{", "[]", '{"run": 1}', "EDIT"],
    ids=["corrupt", "not-an-object", "fields-missing", "hand-edited"],
)
def test_a_record_that_cannot_be_read_is_one_clear_line_everywhere(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    where = home_of(repo) / NAME
    save(home_of(repo), record())
    if text == "EDIT":  # numbers turned into words: read, but not shown
        raw = json.loads(where.read_text())
        raw["tasks"][0] |= {"usd": "a lot", "started": "noon"}
        text = json.dumps(raw)
    where.write_text(text)
    said = f"The lanes record {where} cannot be read (corrupt or edited by hand)."
    assert lines(repo) == [said]
    monkeypatch.chdir(repo)
    for argv in (("status",), ("loops",), ("watch", "--once"), ("logs", "--lanes")):
        code, out = cli(capsys, *argv)
        # A view as wide as its terminal wraps the long line: at a space (which the wrap
        # drops) or, inside the path, anywhere.
        flat = " ".join(out.split())
        assert said in out or said in out.replace("\n", "") or said in flat, (argv, out)
        assert "Traceback" not in out
    # A lane's log needs only the run's name and the lane's: a wrong number does not hide it.
    edited = "a lot" in text
    lane = "Lane T1 (merged) has written no log yet." if edited else said
    assert cli(capsys, "logs", "--lane", "T1")[1].strip() == lane
    report(cwd=str(repo), out=str(repo.parent / "page.html"))
    page = (repo.parent / "page.html").read_text()
    assert f'<section id="lanes"><h2>Lanes</h2><p>{said}</p></section>' in page


def test_outside_a_repository_there_is_no_lanes_run_to_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "plain").mkdir()
    monkeypatch.chdir(tmp_path / "plain")
    code, out = cli(capsys, "watch", "--once")
    assert code == 0 and "no loops" in out and "Lanes" not in out
    assert cli(capsys, "logs", "--lanes")[1].strip() == NO_LANES
