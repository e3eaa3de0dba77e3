"""A loop in a repository holding planted nested repositories: the plan, the edit hooks, the
Stop's review, the checks, `status` and `report` run none of their programs, and an edit
inside one still reaches the manager's review."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import (
    Hook,
    Script,
    cli,
    edit_payload,
    git,
    make_repo,
    payload,
    plan_body,
    review_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.nested_plant import plant_all, program, ran


def test_no_hook_or_command_runs_what_a_nested_repository_names(
    tmp_path: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    top, markers = plant_all(tmp_path)
    manager.enqueue(plan_body(1), schema="Plan")
    argv = ["-C", str(top), "plan", "--include-dirty", "--review", "stop"]
    assert main([*argv, "--check", "true", "--session-id", "sess-1", "goal"]) == 0
    assert ran(markers) == []
    (top / "loose/a.txt").write_text("EDITED INSIDE\n")
    hook("PostToolUse", edit_payload(top, "loose/a.txt"))
    manager.enqueue(review_body("fix"), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    out = hook("Stop", payload("Stop", top)).json
    assert out["decision"] == "block"
    assert ran(markers) == []
    # The edit inside the nested repository reached the manager, read as bytes.
    asked = str(manager.requests[-1].body)
    assert "+EDITED INSIDE" in asked and "inside a nested repository" in asked
    for command in (["status"], ["report", "--out", str(tmp_path / "page.html")]):
        code, _ = cli(capsys, "-C", str(top), *command)
        assert code == 0
    assert ran(markers) == []


def test_the_rounds_driver_never_runs_a_nested_filter_and_stops_at_its_config(
    repo: Path, script: Script, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.integration.test_rounds_driver import EXIT, drive, rounds_of

    markers = tmp_path / "markers"
    markers.mkdir()
    program(tmp_path / "bin", "filter-clean", markers)
    plant = (
        "git init -q inner && cd inner && echo one > a.txt && echo '* filter=evil' > .gitattributes"
        " && git add -A && git -c user.name=i -c user.email=i@i commit -qm inner"
        f" && git config filter.evil.clean {tmp_path}/bin/filter-clean && echo two > a.txt"
        " && cd .. && git add inner"
    )
    ready = {"shell": plant, "write": {"hello.txt": "hello\n"}, "say": "Done.\n::potter(ready)"}
    edit = {"shell": "echo three > inner/a.txt", "say": "::potter(exit)"}
    script([ready, edit, EXIT])
    code, record = drive(repo)
    # The nested repository's own config is a file git runs programs from: the driver's
    # comparison before round 2 ends the run, naming it, and nothing it names ever ran.
    assert (code, record["status"]) == (1, "tampered"), record
    assert ran(markers) == []
    assert len(rounds_of(repo)) == 1
    err = capsys.readouterr().err
    assert "left as they are (nested repositories): inner" in err
    assert "inner/.git/config" in err + str(record)
    staged = git(repo, "ls-files", "--stage")
    assert "inner" not in staged and "hello.txt" in staged


def test_a_plan_that_stashes_work_and_gives_it_back_runs_no_nested_program(
    tmp_path: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    top, markers = plant_all(tmp_path)
    (top / "README.md").write_text("# top, edited\n")
    # No plan queued: the manager fails, and the plan gives the stashed work back.
    code, out = cli(capsys, "-C", str(top), "plan", "--stash", "goal")
    assert code == 1 and "given back" in out, out
    assert ran(markers) == []
    assert (top / "README.md").read_text() == "# top, edited\n"


def test_a_vendored_clone_and_line_ending_attributes_work_unasked(
    tmp_path: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    dep = make_repo(tmp_path / "dep", {"lib.py": "def f():\n    return 1\n"})
    top = make_repo(
        tmp_path / "top", {"app.py": "x = 1\n", ".gitattributes": "* text=auto eol=lf\n"}
    )
    git(top, "clone", "-q", str(dep), "vendor/dep")
    manager.enqueue(plan_body(1), schema="Plan")
    argv = ["-C", str(top), "plan", "--include-dirty", "--review", "stop", "--check", "true"]
    assert main([*argv, "--session-id", "sess-1", "goal"]) == 0
    (top / "app.py").write_text("x = 2\r\n")
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("done", done=True), schema="Verdict")
    hook("Stop", payload("Stop", top))
    asked = "\n".join(r.prompt_text for r in manager.requests[1:])
    assert "+x = 2" in asked and "vendor/dep" not in asked
    assert state_of(top)["status"] == "done"
