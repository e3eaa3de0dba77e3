"""What every loop style must do, run against each registered style and a fourth one that
exists only in the tests (`tests/fakes/green_style`, plugged in with one registry line): its
record round-trips through state.json, the views show it, `cancel` and `resume` answer for it,
a Stop of a loop it does not own changes nothing, and a hand-edited record is refused clearly
without losing the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex import hosts, styles, typedjson
from autopilot_codex.checks.evidence import user_checks
from autopilot_codex.commands import loops, watch
from autopilot_codex.commands.cancel import cancel
from autopilot_codex.commands.report import report
from autopilot_codex.commands.resume import resume
from autopilot_codex.commands.status import status
from autopilot_codex.config import Config
from autopilot_codex.errors import BridgeError, StateCorrupt
from autopilot_codex.gitrepo import head_sha
from autopilot_codex.hookio import ALLOW, HookInput
from autopilot_codex.paths import project_dir
from autopilot_codex.state import Plan, State, Task, planless
from autopilot_codex.state_ranges import parse_state
from autopilot_codex.store import Store
from autopilot_codex.styles.autopilot.record import AutopilotRecord
from autopilot_codex.styles.ralph import reducer as ralph
from autopilot_codex.styles.rounds import RoundsRecord
from tests.conftest import Hook, payload
from tests.fakes import green_style

STYLES = ("autopilot", "ralph", "rounds", "green")


def _green() -> styles.Style:
    return green_style


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one registry line, added the way a test adds a member."""
    monkeypatch.setattr(styles, "STYLES", styles.STYLES.with_member("green", _green))


def _autopilot(worktree: str, head: str) -> State:
    plan = Plan("two steps", [Task("T1", "first", ["a.txt"], ["write it"], ["it exists"], [])])
    return State(
        goal="write a.txt",
        plan=plan,
        base_sha=head,
        worktree=worktree,
        session_id="s1",
        own=AutopilotRecord(model="gpt-test", current_task="T1", task_base_sha=head),
    )


def _ralph(worktree: str, head: str) -> State:
    return ralph.start(
        prompt="keep going",
        now=1.0,
        completion_promise="DONE",
        worktree=worktree,
        head=head,
        session_id="s1",
    )


def _rounds(worktree: str, head: str) -> State:
    return planless(
        goal="a run",
        worktree=worktree,
        head=head,
        style="rounds",
        owner="driver",
        session_id="driver-pid:1",
        own=RoundsRecord(run_id="r1"),
    )


def _green_loop(worktree: str, head: str) -> State:
    return green_style.start(worktree, head, "s1", user_checks(["test -f green.txt"]))


BUILD: dict[str, Callable[[str, str], State]] = {
    "autopilot": _autopilot,
    "ralph": _ralph,
    "rounds": _rounds,
    "green": _green_loop,
}


def planted(repo: Path, style: str) -> tuple[Store, State]:
    store = Store(repo)
    state = BUILD[style](str(repo), head_sha(repo))
    with store.locked():
        store.save_plan(state.plan)
        return store, store.save(state)


@pytest.mark.parametrize("style", STYLES)
def test_its_record_round_trips_through_state_json(repo: Path, style: str) -> None:
    store, state = planted(repo, style)
    loaded = store.load()
    assert loaded is not None and loaded.own == state.own and loaded.to_json() == state.to_json()
    on_disk = json.loads(store.state_path.read_text())
    # The record sits under the style's name, and nothing of the envelope is in it.
    record = on_disk.get(style)
    assert isinstance(record, dict) and not set(record) & (set(on_disk) - {style})


@pytest.mark.parametrize("style", STYLES)
def test_status_loops_watch_and_report_show_it(repo: Path, style: str) -> None:
    store, state = planted(repo, style)
    shown = status(cwd=repo, as_json=False)
    assert shown.startswith("autopilot-codex: ") and state.status in shown.splitlines()[0]
    raw = json.loads(status(cwd=repo, as_json=True))
    assert raw["style"] == style and style in raw and "spend" in raw
    listed = [loop for loop in loops.every() if loop.key == store.dir.name]
    assert [loop.style for loop in listed] == [style]
    assert style in loops.table(listed)
    rows = watch.rows(silence_s=60.0, here=str(repo))
    assert [row.style for row in rows] == [style]
    assert style in watch.frame(rows, 160)
    said = report(cwd=str(repo), out=str(repo.parent / "report.html"))
    assert "report.html" in said and (repo.parent / "report.html").read_text()


@pytest.mark.parametrize("style", STYLES)
def test_cancel_ends_it_or_names_the_verb_that_does(repo: Path, style: str) -> None:
    store, _ = planted(repo, style)
    said = cancel(cwd=repo)
    after = store.load(with_plan=False)
    assert after is not None
    if styles.of(after).ENDED_BY == "cancel":
        assert after.status != "running" and not store.marker.exists()
    else:
        assert (
            after.status == "running"
            and f"stop it with autopilot-codex {styles.of(after).ENDED_BY}" in said
        )


@pytest.mark.parametrize("style", STYLES)
def test_resume_takes_it_on_or_names_the_verb_that_does(repo: Path, style: str) -> None:
    store, state = planted(repo, style)
    verb = styles.of(state).RESUMED_BY
    if verb == "resume":
        assert "already running" in resume(
            cwd=repo, budget_usd=None, max_iterations=None, session_id=None
        )
        return
    with pytest.raises(BridgeError, match=f"start it again with autopilot-codex {verb}"):
        resume(cwd=repo, budget_usd=None, max_iterations=None, session_id=None)


def _no_manager(model: str, config: Config) -> object:
    raise AssertionError("a Stop of another session's loop asks no manager")


@pytest.mark.parametrize("style", STYLES)
def test_a_stop_of_a_loop_it_does_not_own_changes_nothing(repo: Path, style: str) -> None:
    store, state = planted(repo, style)
    before = store.state_path.read_text()
    data = HookInput(event="Stop", session_id="another", last_assistant_message="done")
    ctx = styles.HookContext(data, store, Config(), hosts.get("claude"), _no_manager)  # type: ignore[arg-type]
    assert styles.get(style)(ctx) == ALLOW
    assert store.state_path.read_text() == before


@pytest.mark.parametrize("style", STYLES)
def test_a_hand_edited_record_is_refused_by_name_and_the_file_kept(repo: Path, style: str) -> None:
    store, _ = planted(repo, style)
    data = json.loads(store.state_path.read_text())
    data[style]["unknown"] = 1
    with pytest.raises(typedjson.Invalid, match=f"{style}.unknown"):
        parse_state(data)
    text = json.dumps(data)
    store.state_path.write_text(text)
    with pytest.raises(StateCorrupt, match="moved aside"):
        store.load()
    # Not lost: moved aside whole, and the rails stay on.
    (aside,) = project_dir(repo).glob("state.json.corrupt-*")
    assert aside.read_text() == text and store.marker.exists()


def test_the_fourth_style_runs_through_the_real_hook_path(repo: Path, hook: Hook) -> None:
    """Checks until green: a Stop is blocked while the check fails, let through once it passes."""
    store, _ = planted(repo, "green")
    first = json.loads(hook("Stop", payload("Stop", repo, "s1")).stdout)
    assert first["decision"] == "block" and "test -f green.txt" in first["reason"]
    (repo / "green.txt").write_text("ok\n")
    second = hook("Stop", payload("Stop", repo, "s1")).stdout
    assert "green: the checks pass" in second and "block" not in second
    state = store.load(with_plan=False)
    assert state is not None and state.status == "done"
    assert state.own == green_style.GreenRecord(blocked=1)
    assert "0 Stops blocked" not in status(cwd=repo, as_json=False)
