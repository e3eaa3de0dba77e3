"""Answers that fit the schema but say nothing; files a reject may restore; when a task advances."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.manager.answers import Advance, may_advance, meaning, restorable
from autopilot_codex.manager.schemas import Finding, Plan, Review, Task, Verdict

BRIDGE = Path(__file__).resolve().parents[2] / "bridge"


def finding(title: str = "wrong content", recommendation: str = "fix it") -> Finding:
    return Finding(
        severity="high",
        file="a.py",
        line_start=1,
        line_end=2,
        title=title,
        recommendation=recommendation,
    )


def review(decision: str, summary: str, findings: list[Finding] | None = None) -> Review:
    return Review(decision=decision, summary=summary, findings=findings or [], revert_files=[])  # type: ignore[arg-type]


def task(n: int, **extra: Any) -> Task:
    fields: dict[str, Any] = {
        "id": f"T{n}",
        "title": f"task {n}",
        "files": [],
        "steps": [],
        "acceptance": ["it works"],
        "tests": [],
    }
    fields.update(extra)
    return Task(**fields)


@pytest.mark.parametrize("decision", ["fix", "reject"])
@pytest.mark.parametrize(
    ("summary", "findings"),
    [
        ("", []),
        ("  ...  ", []),
        ("", [finding("", "")]),
        ("", [finding("", "do better")]),
    ],
    ids=["empty", "punctuation", "noise-finding", "untitled-finding"],
)
def test_a_fix_or_reject_that_says_nothing_is_unusable(
    decision: str, summary: str, findings: list[Finding]
) -> None:
    _, problem = meaning(review(decision, summary, findings))
    assert problem is not None
    assert decision in problem and "empty summary" in problem


@pytest.mark.parametrize(
    ("summary", "findings"), [("rename x", []), ("", [finding("x is unused", "")])]
)
def test_a_fix_with_a_summary_or_a_titled_finding_is_usable(
    summary: str, findings: list[Finding]
) -> None:
    assert meaning(review("fix", summary, findings))[1] is None


def test_an_empty_approve_is_usable() -> None:
    assert meaning(review("approve", ""))[1] is None


def test_noise_findings_are_dropped_and_real_ones_kept() -> None:
    kept = finding("off by one", "")
    value, problem = meaning(
        review("fix", "see findings", [finding("", ""), kept, finding(" ", "-")])
    )
    assert problem is None
    assert value.findings == [kept]


def test_a_verdict_needs_a_reason_and_loses_its_noise() -> None:
    empty = Verdict(
        decision="continue", reason=" ", current_task_done=True, instructions="", findings=[]
    )
    assert meaning(empty)[1] == "the verdict's reason was empty"
    noisy = empty.model_copy(update={"reason": "keep going", "findings": [finding("", "")]})
    value, problem = meaning(noisy)
    assert problem is None and value.findings == []


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        ([], "the plan had no tasks"),
        ([task(1, title="")], "task 1 ('T1') has an empty title"),
        ([task(1, title=" -- ")], "task 1 ('T1') has an empty title"),
        ([task(1), task(2, id="T1")], "task 2 ('T1') repeats the id 'T1'"),
        ([task(1, id=" ")], "task 1 has an empty id"),
        ([task(1, acceptance=[])], "task 1 ('T1') has no acceptance criterion"),
        ([task(1, acceptance=["", "."])], "task 1 ('T1') has no acceptance criterion"),
    ],
)
def test_plans_that_say_nothing_are_unusable(tasks: list[Task], expected: str) -> None:
    _, problem = meaning(Plan(summary="s", tasks=tasks))
    assert problem is not None and expected in problem


def test_every_problem_of_a_plan_is_named_at_once() -> None:
    _, problem = meaning(Plan(summary="s", tasks=[task(1, title="!"), task(2, acceptance=[])]))
    assert problem is not None
    assert "task 1 ('T1') has an empty title" in problem
    assert "task 2 ('T2') has no acceptance criterion" in problem


def test_a_good_plan_is_usable() -> None:
    assert meaning(Plan(summary="", tasks=[task(1), task(2)]))[1] is None


CHANGED = ["src/a.py", "README.md", "docs/b c.md"]


@pytest.mark.parametrize(
    ("revert", "kept", "dropped"),
    [
        (["1", "2"], [], ["1", "2"]),
        (["src/a.py"], ["src/a.py"], []),
        (["src/a.py", "./src/a.py", "src//a.py", "src/a.py"], ["src/a.py"], []),
        (["b/src/a.py", "a/README.md"], ["src/a.py", "README.md"], []),
        (["src/../README.md"], ["README.md"], []),
        (
            ["../README.md", "../../etc/passwd", ".."],
            [],
            ["../README.md", "../../etc/passwd", ".."],
        ),
        (
            ["/etc/passwd", "/src/a.py", "~/x", "C:\\src\\a.py"],
            [],
            ["/etc/passwd", "/src/a.py", "~/x", "C:\\src\\a.py"],
        ),
        (["", " ", ".", "src"], [], ["", " ", ".", "src"]),
        (["other.py", "other.py", "README.md"], ["README.md"], ["other.py"]),
        (["docs/b c.md"], ["docs/b c.md"], []),
    ],
    ids=[
        "numbers",
        "one",
        "duplicates",
        "diff-prefixes",
        "dotdot-inside",
        "dotdot-outside",
        "absolute",
        "not-files",
        "outside-the-task",
        "space",
    ],
)
def test_only_files_the_task_changed_are_restorable(
    revert: list[str], kept: list[str], dropped: list[str]
) -> None:
    assert restorable(revert, CHANGED) == (kept, dropped)


def test_nothing_is_restorable_when_the_task_changed_nothing() -> None:
    assert restorable(["src/a.py"], []) == ([], ["src/a.py"])


HEAD = "b" * 40
BASE = "a" * 40


@pytest.mark.parametrize(
    ("done", "head", "base", "ok", "note"),
    [
        (False, HEAD, BASE, False, ""),
        (True, HEAD, BASE, True, ""),
        (True, BASE, BASE, False, "nothing was committed since it began (HEAD aaaaaaaaaaaa)"),
        (True, None, None, False, "there is no commit"),
        (True, HEAD, None, True, ""),
    ],
    ids=["not-done", "done-and-committed", "done-no-commit", "no-head", "first-commit"],
)
def test_a_task_advances_only_with_a_new_commit(
    done: bool, head: str | None, base: str | None, ok: bool, note: str
) -> None:
    advance = may_advance("T2", done, head, base)
    assert advance.ok is ok
    assert note in advance.note
    assert (advance.note == "") is (ok or not done)
    if note:
        assert advance.note.startswith("T2 not advanced")
    assert isinstance(advance, Advance)


def test_the_reducer_rules_load_nothing_heavy() -> None:
    code = (
        "import sys; import autopilot_codex.manager.answers as a; "
        "a.restorable(['x'], ['x']); a.may_advance('T1', True, 'b', 'a'); "
        "print(sorted(m for m in ('pydantic', 'openai') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(BRIDGE)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "[]", out.stderr


def test_a_path_with_a_nul_is_never_restorable() -> None:
    # Even when the changed files name it too: no git path holds a NUL.
    assert restorable(["src/a\0.py"], ["src/a\0.py"]) == ([], ["src/a\0.py"])


def test_an_advance_is_a_value_not_a_record_to_edit() -> None:
    advance = may_advance("T2", True, HEAD, BASE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        advance.ok = False  # type: ignore[misc]


def test_a_plan_names_six_problems_and_counts_the_rest() -> None:
    six = [task(n, title="") for n in range(1, 7)]
    _, problem = meaning(Plan(summary="s", tasks=six))
    assert problem is not None and "more" not in problem and "task 6 ('T6')" in problem
    _, problem = meaning(Plan(summary="s", tasks=[*six, task(7, title="")]))
    assert problem is not None and problem.endswith("; and 1 more")
    assert "task 7" not in problem
