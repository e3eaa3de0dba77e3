"""The entrance builds no store for the loop's style: the style's first use does
(`HookContext.store`), and what it saved is still told (`announce`) and still read by the
next hook."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import announce
from autopilot_codex.cli import main
from autopilot_codex.store import Store
from tests.conftest import make_repo, payload


def stop(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    from autopilot_codex import gate

    raw = json.dumps(payload("Stop", repo, last_assistant_message="<promise>DONE</promise>"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw.encode())))
    capsys.readouterr()
    assert gate.hook_main(["Stop", "--host", "claude"]) == 0
    return capsys.readouterr().out


def test_a_stop_that_ends_the_loop_tells_it_through_the_store_the_style_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    argv = ["-C", str(repo), "ralph", "--session-id", "sess-1", "--completion-promise", "DONE"]
    assert main([*argv, "go"]) == 0
    told: list[tuple[str, str]] = []

    def heard(store: Store, via: str) -> None:
        told.extend((before, state.status) for before, state in store.moved)

    monkeypatch.setattr(announce, "announce", heard)
    stop(repo, monkeypatch, capsys)
    assert told == [("running", "done")]
    state = Store(repo).load(with_plan=False)
    assert state is not None and state.status == "done"


def test_a_stop_that_goes_on_tells_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    assert main(["-C", str(repo), "ralph", "--session-id", "sess-1", "go"]) == 0
    called: list[Any] = []
    monkeypatch.setattr(announce, "announce", lambda *args: called.append(args))
    answer = json.loads(stop(repo, monkeypatch, capsys))
    assert answer["decision"] == "block" and called == []
