"""The JSONL rollout: append, read back, survive a torn last line, refuse corruption."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.rounds import rollout


def header(run: str = "r1") -> rollout.RunHeader:
    return rollout.RunHeader("run", run, "goal", "claude", 10, "h.md", "sha", 1.0)


def round_(n: int, run: str = "r1", cost: float | None = 0.5) -> rollout.RoundRecord:
    return rollout.RoundRecord(
        "round",
        run,
        n,
        1,
        "implement",
        False,
        1.0,
        2.0,
        "ok",
        0,
        [],
        ["a.txt"],
        cost,
        None,
        "Write: a.txt",
        "msg",
        "continue",
    )


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    rollout.append(path, header())
    rollout.append(path, round_(1))
    rollout.append(path, round_(2, cost=None))
    rollout.append(path, rollout.RunEnd("end", "r1", "complete", 3.0))
    rollout.append(path, header("r2"))
    runs = rollout.read(path)
    assert [r.header.run for r in runs] == ["r1", "r2"]
    assert runs[0].rounds == [round_(1), round_(2, cost=None)]
    assert runs[0].cost_usd == 0.5
    assert runs[0].end is not None and runs[0].end.status == "complete"
    assert rollout.last_run(path) == runs[1]


def test_missing_file_is_no_run(tmp_path: Path) -> None:
    assert rollout.read(tmp_path / "none.jsonl") == []
    assert rollout.last_run(tmp_path / "none.jsonl") is None


def test_a_torn_last_line_is_skipped_and_the_next_append_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    rollout.append(path, header())
    rollout.append(path, round_(1))
    with path.open("a") as handle:
        handle.write('{"kind": "round", "run": "r1", "rou')
    assert rollout.read(path)[0].rounds == [round_(1)]
    rollout.append(path, round_(2))
    assert rollout.read(path)[0].rounds == [round_(1), round_(2)]
    assert "rou\n" not in path.read_text()


def test_corruption_in_the_middle_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    rollout.append(path, header())
    with path.open("a") as handle:
        handle.write("not json\n")
    rollout.append(path, round_(1))
    with pytest.raises(BridgeError, match="corrupt at line 2"):
        rollout.read(path)


def test_a_record_must_match_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    rollout.append(path, header())
    path.write_text(path.read_text() + '{"kind": "round", "run": "r1"}\n{"kind": "end"}\n')
    with pytest.raises(BridgeError, match="corrupt at line 2: invalid at round: missing"):
        rollout.read(path)


def test_a_round_of_no_run_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    rollout.append(path, round_(1))
    rollout.append(path, round_(2))
    with pytest.raises(BridgeError, match="record of no run at line 1"):
        rollout.read(path)
