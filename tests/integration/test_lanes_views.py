"""`watch`, `logs` and the report over a real lanes run's record: two lanes edit the same
file, one lands, the other is refused and its manager-made follow-up lands."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.commands.report import report
from tests.conftest import cli, git, task
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_lanes import FOLLOW_UP, barrier, host, lanes, plan

__all__ = ["host"]  # the lanes' fake implementer, a fixture


def test_watch_logs_and_the_report_show_a_real_lanes_run(
    repo: Path,
    manager: FakeOpenAI,
    host: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    barrier(tmp_path, monkeypatch, 2)
    monkeypatch.setenv("LANE_HOST_FILE", "shared.txt")
    plan(manager, task(1, depends_on=[]), task(2, depends_on=[]))
    manager.enqueue(FOLLOW_UP, schema="Task")
    code, record = lanes(repo, "--lanes", "2")
    assert code == 0, record
    tasks = {t["state"] + ("-fix" if t["follows"] else ""): t for t in record["tasks"]}
    merged, refused, fix = tasks["merged"], tasks["refused"], tasks["merged-fix"]
    monkeypatch.chdir(repo)

    code, out = cli(capsys, "watch", "--once")
    # A row per lane's own rounds loop; none for the repository, whose folder holds only the
    # lanes run (shown below the table).
    assert out.count("│ done   │ rounds │") == 3 and "unknown" not in out, out
    assert code == 0 and f"Lanes run {record['run']}: complete, 2 at most, spent $" in out
    shown = [line.split()[:3] for line in out.splitlines() if line.startswith("  T")]
    assert sorted(shown) == sorted(
        [
            [merged["id"], "merged", "round"],
            [refused["id"], "refused", "round"],
            [fix["id"], "merged", "round"],
        ]
    )
    assert "  queue: empty" in out

    code, out = cli(capsys, "logs", "--lanes")
    said = out.splitlines()
    assert said[0] == f"Lanes run {record['run']}: write the task files"
    told = [line.split(" ", 3)[2:] for line in said[1:]]
    assert [merged["id"], merged["why"]] in told and merged["why"].startswith("merged as ")
    assert [refused["id"], refused["why"]] in told
    assert [
        refused["id"],
        f"follow-up {fix['id']}: {fix['title']}",
    ] in told
    # Each lane started, and the run ended, in the order it happened.
    assert sum(1 for t in told if t[1].startswith("started: ")) == 3
    assert said[-1].split(" ", 3)[2:] == ["run", f"complete: {record['why']}; {record['finish']}"]

    code, out = cli(capsys, "logs", "--lane", fix["id"])
    assert out.startswith(f"Lane {fix['id']} (merged), ") and len(out.splitlines()) > 1, out

    report(cwd=str(repo), out=str(tmp_path / "page.html"))
    page = (tmp_path / "page.html").read_text()
    assert '<section id="lanes">' in page
    # Each merged task's commit is the merge on the user's branch the report names.
    for done in (merged, fix):
        sha = done["why"].removeprefix("merged as ")
        assert f"<td><code>{sha}</code></td>" in page
        assert git(repo, "merge-base", "--is-ancestor", sha, "HEAD") == ""
    assert f'<li class="queue-refused"><code>{refused["id"]}</code> refused (conflict)' in page
