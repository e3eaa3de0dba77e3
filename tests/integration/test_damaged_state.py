"""The user's controls on a loop whose state.json is damaged: `stop` and `cancel` set the file
aside, take the rails off and say so, instead of failing on the file they were typed to fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import active_marker, project_dir
from tests.conftest import plan_body
from tests.fakes.openai_server import FakeOpenAI


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def last_event(repo: Path) -> dict[str, object]:
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    return dict(json.loads(lines[-1]))


@pytest.mark.parametrize("damage", [b"{ not json", b'{"status": "\xff\xfe"}'], ids=["json", "utf8"])
def test_stop_on_a_damaged_state_takes_the_rails_off(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    damage: bytes,
) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "goal")[0] == 0
    assert active_marker(repo).exists()
    (project_dir(repo) / "state.json").write_bytes(damage)
    code, out = cli(capsys, "-C", str(repo), "stop")
    assert code == 0
    assert out.strip() == (
        "autopilot-codex: the loop here was without a readable state; its safety rails are off now."
    )
    assert not active_marker(repo).exists()
    (aside,) = project_dir(repo).glob("state.json.corrupt-*")
    assert aside.read_bytes() == damage
    assert last_event(repo)["decision"] == "rails off"
    # Once off, there is nothing more to stop.
    assert "nothing to stop" in cli(capsys, "-C", str(repo), "stop")[1]


def test_cancel_on_a_damaged_ralph_state_takes_the_rails_off(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "-C", str(repo), "ralph", "--session-id", "s", "keep", "going")[0] == 0
    assert active_marker(repo).exists()
    (project_dir(repo) / "state.json").write_text("[]")
    code, out = cli(capsys, "-C", str(repo), "cancel")
    assert code == 0
    assert out.strip() == (
        "autopilot-codex: no ralph loop is running here; its safety rails are off now."
    )
    assert not active_marker(repo).exists()
    assert last_event(repo)["decision"] == "rails off"
    assert "nothing to cancel" in cli(capsys, "-C", str(repo), "cancel")[1]
