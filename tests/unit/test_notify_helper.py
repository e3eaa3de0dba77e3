"""The detached notification helper (`notify.run`) on what it is handed: only lists of string
arguments are run, each bounded in time, and every failure is a line in `logs/notify.log`."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from autopilot_codex import notify

EVENT = b'{"event": "loop.transition", "status": "done"}\n'


@pytest.fixture
def event_on_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EVENT)))


def writer(path: Path) -> list[str]:
    """A notifier that writes the event it reads to `path`."""
    code = f"import sys; open({str(path)!r}, 'wb').write(sys.stdin.buffer.read())"
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("argv", [[], ["not json"], ['{"a": 1}'], ["7"]])
@pytest.mark.usefixtures("event_on_stdin")
def test_commands_that_are_not_a_list_run_nothing(isolated: Path, argv: list[str]) -> None:
    assert notify.run(argv) == 0
    assert not (isolated / "logs").exists()


@pytest.mark.usefixtures("event_on_stdin")
def test_only_commands_of_string_arguments_are_run_each_with_the_event(
    isolated: Path, tmp_path: Path
) -> None:
    told = tmp_path / "told"
    commands = ["echo hi", [], [sys.executable, 1], writer(told)]
    assert notify.run([json.dumps(commands)]) == 0
    assert told.read_bytes() == EVENT
    assert not (isolated / "logs").exists()


@pytest.mark.usefixtures("event_on_stdin")
def test_a_notifier_past_its_time_is_stopped_and_the_next_still_runs(
    isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notify, "TIMEOUT_S", 1.0)
    told = tmp_path / "told"
    hanging = [sys.executable, "-c", "import time; time.sleep(600)"]
    assert notify.run([json.dumps([hanging, writer(told)])]) == 0
    log = (isolated / "logs" / "notify.log").read_text()
    assert f"{sys.executable}: still running after 1 s; stopped" in log
    assert told.read_bytes() == EVENT
