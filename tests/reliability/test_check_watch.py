"""The loop's side of a check run (`evidence`), pinned where the mutation audit found changes
that no test noticed: which changes to the loop's files are the bridge's own, the ledger line
for a check that tampered, and where a loop's checks come from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.checks import evidence
from autopilot_codex.checks.run import spec
from autopilot_codex.config import config_file
from autopilot_codex.errors import BridgeError
from autopilot_codex.store import Store


def test_a_state_the_bridge_saved_is_excused_and_a_plan_change_is_not(planned: Path) -> None:
    store = Store(planned)
    watch = evidence.store_watch(store)
    before = watch.take()
    with store.locked():
        state = store.load()
        assert state is not None
        store.save(state.evolve(budget_usd=3.0))
    # The bridge's own save (its witness vouches for it) is no tampering...
    assert watch.excused(store.state_path, before)
    assert watch.excused(store.witness_path, before)
    # ...and a changed plan never is, whatever the state did meanwhile.
    assert not watch.excused(store.plan_path, before)


def test_a_new_state_under_a_damaged_witness_is_never_excused(planned: Path) -> None:
    store = Store(planned)
    watch = evidence.store_watch(store)
    before = watch.take()
    with store.locked():
        state = store.load()
        assert state is not None
        store.save(state.evolve(budget_usd=3.0))
    store.witness_path.write_text("{not a witness")
    assert not watch.excused(store.state_path, before)


def test_an_unchanged_state_excuses_no_marker_change(planned: Path) -> None:
    store = Store(planned)
    watch = evidence.store_watch(store)
    before = watch.take()
    assert not watch.excused(store.marker, before)


def test_each_check_that_tampered_gets_a_ledger_line(planned: Path) -> None:
    store = Store(planned)
    watch = evidence.store_watch(store)
    watch.tampered.append(("make forge", ["config.json", "state.json"]))
    evidence.record_tamper(store, watch)
    lines = store.events_path.read_text().splitlines()
    event = json.loads(lines[-1])
    assert event["event"] == "checks.tamper" and event["decision"] == "fail"
    assert event["command"] == "make forge"
    assert event["changed"] == ["config.json", "state.json"]
    assert "config.json, state.json" in event["reason"]


def _config(data: object) -> None:
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_check_flags_come_before_the_config_even_when_empty() -> None:
    _config({"checks": ["make test"]})
    assert evidence.user_checks(["pytest -q"]) == [spec("pytest -q")]
    assert evidence.user_checks([]) == []
    assert evidence.user_checks(None) == [spec("make test")]


def test_a_bad_entry_in_the_config_is_refused_by_name() -> None:
    # (No other warning here: this test's folder name would put "checks" in it too.)
    _config({"checks": [5]})
    with pytest.raises(BridgeError, match="checks"):
        evidence.user_checks(None)


def test_each_fresh_check_run_gets_a_ledger_line(planned: Path) -> None:
    store = Store(planned)
    with store.locked():
        state = store.load()
        assert state is not None
        state = state.evolve(checks=[spec("true"), spec("exit 4")])
        evidence.gather(store, state, manager_calls=0, call_timeout_s=1.0)
    lines = [json.loads(x) for x in store.events_path.read_text().splitlines()]
    runs = [e for e in lines if e["event"] == "checks.run"]
    assert [(e["command"], e["status"], e["exit_code"]) for e in runs] == [
        ("true", "pass", 0),
        ("exit 4", "fail", 4),
    ]
