"""`loops` on a machine with no loop, or none to prune: a sentence, not an empty table."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from autopilot_codex.paths import project_key
from tests.conftest import cli


def test_no_loops_is_said_and_is_an_empty_list_in_json(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not (isolated / "projects").exists()
    assert cli(capsys, "loops") == (0, "No loops on this machine.\n")
    code, out = cli(capsys, "loops", "--json")
    assert code == 0 and json.loads(out) == []


def test_nothing_to_prune_names_the_age_asked_for(
    isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "loops", "--prune", "--older-than", "3d")
    assert (code, out) == (0, "Nothing to prune: no ended loop is older than 3d.\n")
    # A loop that ended just now is not old enough, and stays.
    folder = isolated / "projects" / project_key(tmp_path / "w")
    folder.mkdir(parents=True)
    state = {"status": "done", "worktree": str(tmp_path / "w"), "style": "autopilot"}
    (folder / "state.json").write_text(json.dumps(state))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    (folder / "events.jsonl").write_text(json.dumps({"ts": stamp, "event": "done"}) + "\n")
    code, out = cli(capsys, "loops", "--prune", "--older-than", "3d")
    assert out == "Nothing to prune: no ended loop is older than 3d.\n" and folder.exists()
    code, out = cli(capsys, "loops", "--prune", "--older-than", "0s", "--dry-run")
    assert out.startswith(f"would remove {folder.name} (done, ") and folder.exists()
