"""The per-arm summary and the report's table and files, from hand-made trials."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bench.ab import records, report
from bench.ab.cli import main
from bench.ab.records import Trial
from bench.ab.summary import summarise


def trial(task: str, arm: str, resolved: bool, said: bool, usd: float, rep: int = 0) -> Trial:
    return Trial(
        task=task,
        arm=arm,
        rep=rep,
        host="claude",
        model="m",
        resolved=resolved,
        said_done=said,
        host_usd=usd if arm == "solo" else usd * 0.75,
        manager_usd=0.0 if arm == "solo" else usd * 0.25,
        tokens=1000,
        wall_s=10.0 if arm == "solo" else 30.0,
        status="done",
    )


TRIALS = [
    trial("a", "solo", False, True, 0.10),
    trial("b", "solo", True, True, 0.10),
    trial("c", "solo", False, False, 0.20),
    trial("a", "autopilot", True, True, 0.40),
    trial("b", "autopilot", True, True, 0.40),
    trial("c", "autopilot", False, False, 0.40),
]


def test_summary_per_arm() -> None:
    solo, auto = summarise(TRIALS)
    assert (solo.arm, solo.trials, solo.resolved, solo.said_done, solo.false_done) == (
        "solo", 3, 1, 2, 1
    )
    assert solo.false_done_rate == 0.5
    assert solo.usd == pytest.approx(0.40) and solo.usd_per_resolved == pytest.approx(0.40)
    assert solo.manager_share == 0.0 and solo.versus_baseline is None
    assert auto.resolved == 2 and auto.false_done == 0 and auto.false_done_rate == 0.0
    assert auto.usd_per_resolved == pytest.approx(0.60)
    assert auto.manager_share == pytest.approx(0.25)
    assert auto.median_wall_s == 30.0
    versus = auto.versus_baseline
    assert versus is not None
    assert (versus.pairs, versus.only_arm, versus.only_base) == (3, 1, 0)
    assert versus.difference == pytest.approx(1 / 3) and versus.p_value == 1.0


def test_an_arm_that_never_claims_done_has_no_false_done_rate() -> None:
    (only,) = summarise([trial("a", "rounds", False, False, 0.0)])
    assert only.false_done_rate is None and only.usd_per_resolved is None
    assert only.manager_share is None and only.versus_baseline is None


def test_questions_are_counted_per_arm_and_old_records_read_as_none() -> None:
    asked = dataclasses.replace(TRIALS[3], questions_asked=2, questions_answered=1)
    by_manager = dataclasses.replace(TRIALS[4], questions_by_manager=1)
    _solo, auto = summarise([*TRIALS[:3], asked, by_manager, TRIALS[5]])
    assert (auto.questions_asked, auto.questions_answered, auto.questions_by_manager) == (2, 1, 1)
    # A record written before the counts existed reads as no question asked.
    old = {k: v for k, v in TRIALS[0].to_json().items() if not k.startswith("questions_")}
    assert records.from_json(old).questions_asked == 0


def test_records_round_trip_and_derived_fields_are_recomputed(tmp_path: Path) -> None:
    for t in TRIALS:
        records.append(tmp_path, t)
    line = json.loads((tmp_path / records.TRIALS).read_text().splitlines()[0])
    assert line["false_done"] is True and line["usd"] == pytest.approx(0.10)
    line["false_done"] = False  # a doctored derived field is not trusted
    assert records.from_json(line).false_done is True
    assert records.load(tmp_path) == TRIALS
    assert records.load(tmp_path / "nowhere") == []


def test_report_writes_table_json_and_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for t in TRIALS:
        records.append(tmp_path, t)
    (tmp_path / "meta.json").write_text(json.dumps({"date": "2026-01-01", "n": 1}))
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("arm") and "McNemar p" in lines[0]
    assert lines[1].split()[:2] == ["solo", "1/3"]
    assert lines[2].split()[:2] == ["autopilot", "2/3"]
    assert "+33 pts" in lines[2] and "0/2 (0%)" in lines[2] and "1/2 (50%)" in lines[1]
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data["meta"]["date"] == "2026-01-01"
    assert [a["arm"] for a in data["arms"]] == ["solo", "autopilot"]
    page = (tmp_path / "report.html").read_text()
    assert "<script" not in page and "<svg" in page and "Content-Security-Policy" in page


def test_report_escapes_the_runs_text(tmp_path: Path) -> None:
    records.append(tmp_path, trial("<img src=x onerror=alert(1)>", "solo", True, True, 0.1))
    report.write_report(tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "<img src=x" not in page and "&lt;img src=x" in page


def test_report_of_an_empty_run_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 1
    assert "no trial" in capsys.readouterr().err


def test_an_unknown_arm_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--arms", "solo,nope"])
    assert "unknown arm nope" in capsys.readouterr().err
