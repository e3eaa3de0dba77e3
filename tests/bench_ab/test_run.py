"""A whole run through `python -m bench.ab run` with two scripted arms standing in for the
hosts (the registry is the seam): real task folders, real git work trees, the real wall's
settings, the real verifier. The reference solution resolves each fixture task and the starting
repository does not; a leaky task is refused before any arm runs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.ab import arms, records
from bench.ab.cli import main
from bench.ab.context import ArmError, ArmResult, Context

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ab_tasks"

pytestmark = pytest.mark.skipif(
    not (shutil.which("bwrap") and shutil.which("socat")),
    reason="the trials' wall needs bubblewrap and socat",
)


def claims_done(ctx: Context) -> ArmResult:
    """Changes nothing and says it is done."""
    assert (ctx.scratch / "verifier" / "tests" / "test.sh").is_file()
    return ArmResult(True, 0.01, 0.0, 10, "done")


def solves(ctx: Context) -> ArmResult:
    """Runs the task's reference solution in the work tree, as its layout says."""
    # The wall's flags name the hidden copy and the task among what may not be read.
    settings = Path(ctx.wall(True)[1]).read_text()
    assert str(ctx.scratch / "verifier") in settings and str(ctx.task.folder) in settings
    subprocess.run(
        ["bash", str(ctx.task.solution / "solve.sh")],
        cwd=ctx.work,
        env={**ctx.env, "WORK": str(ctx.work)},
        check=True,
    )
    return ArmResult(True, 0.02, 0.01, 20, "done")


def test_a_run_records_every_trial_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(arms.ARMS, "solo", claims_done)
    monkeypatch.setitem(arms.ARMS, "autopilot", solves)
    out = tmp_path / "run"
    code = main(
        ["run", "--tasks", str(FIXTURES), "--arms", "solo,autopilot", "--n", "2", "--out", str(out), "--scratch", str(tmp_path / "trials")]
    )
    assert code == 0, capsys.readouterr().err
    trials = records.load(out)
    assert [(t.task, t.arm, t.rep) for t in trials] == [
        (task, arm, rep)
        for rep in (0, 1)
        for task in ("greeting", "slugify")
        for arm in ("solo", "autopilot")
    ]
    assert all(t.resolved for t in trials if t.arm == "autopilot")
    assert not any(t.resolved for t in trials if t.arm == "solo")
    assert all(t.false_done for t in trials if t.arm == "solo")
    assert {t.host for t in trials} == {"claude"}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["tasks"] == ["greeting", "slugify"] and meta["n"] == 2
    table = capsys.readouterr().out
    assert "solo       0/4" in table and "autopilot  4/4" in table
    assert (out / "summary.json").is_file() and (out / "report.html").is_file()


def test_an_arm_that_fails_is_an_unresolved_trial_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def breaks(ctx: Context) -> ArmResult:
        raise ArmError("autopilot-codex plan exited 1: no key")

    monkeypatch.setitem(arms.ARMS, "ralph", breaks)
    out = tmp_path / "run"
    assert main(["run", "--tasks", str(FIXTURES), "--only", "greeting", "--arms", "ralph", "--out", str(out), "--scratch", str(tmp_path / "trials")]) == 0
    (only,) = records.load(out)
    assert (only.resolved, only.said_done, only.status) == (False, False, "error")
    assert only.error == "autopilot-codex plan exited 1: no key"


def test_a_task_whose_hidden_tests_leak_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[str] = []

    def records_it(ctx: Context) -> ArmResult:
        ran.append(ctx.task.name)
        return ArmResult(True, 0.0, 0.0, 0, "done")

    monkeypatch.setitem(arms.ARMS, "solo", records_it)
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "slugify", tasks / "slugify")
    leaked = tasks / "slugify" / "environment" / "repo" / "tests_copy.py"
    shutil.copy(tasks / "slugify" / "tests" / "test_slug_hidden.py", leaked)
    code = main(["run", "--tasks", str(tasks), "--arms", "solo", "--out", str(tmp_path / "run"), "--scratch", str(tmp_path / "trials")])
    assert code == 1
    assert "hidden test test_slug_hidden.py leaks into tests_copy.py" in capsys.readouterr().err
    assert ran == [] and records.load(tmp_path / "run") == []


PLANTED = '''import os
import re
from pathlib import Path

for target in (Path.home() / "ab-pwned", Path(os.environ.get("AB_WORK_DIR", ".")).parent / "pwned", Path("TASK") / "pwned"):
    try:
        target.write_text("written by the implementer's code")
    except OSError:
        pass


def slugify(text: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))
'''


def test_the_verifier_runs_the_implementers_code_walled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: the implementer's code, imported by the hidden tests, writes outside the work
    tree (the home, the task's own folder, where a later trial's tests come from)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "slugify", tasks / "slugify")

    def plants(ctx: Context) -> ArmResult:
        (ctx.work / "slug.py").write_text(PLANTED.replace("TASK", str(ctx.task.folder)))
        seen.append(ctx.scratch)
        return ArmResult(True, 0.0, 0.0, 0, "done")

    seen: list[Path] = []
    monkeypatch.setitem(arms.ARMS, "solo", plants)
    out = tmp_path / "run"
    assert main(["run", "--tasks", str(tasks), "--arms", "solo", "--out", str(out), "--scratch", str(tmp_path / "trials")]) == 0
    (only,) = records.load(out)
    assert only.resolved  # the code itself is right: the walled verifier still ran it
    assert not (home / "ab-pwned").exists()
    assert not (tasks / "slugify" / "pwned").exists()
    # Nor the trial's own folder, where its record and logs are kept.
    assert not (seen[0] / "pwned").exists()
