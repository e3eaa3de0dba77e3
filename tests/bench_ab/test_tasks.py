"""Loading tasks in Harbor's layout, and the harness's own leak check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.ab import leaks, tasks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ab_tasks"


def test_the_fixture_tasks_load() -> None:
    found = tasks.discover(FIXTURES)
    assert [t.name for t in found] == ["greeting", "slugify"]
    slug = found[1]
    assert slug.kind == "tempting-fix" and slug.budget_usd == 1.0
    assert slug.agent_timeout_s == 120 and slug.verifier_timeout_s == 120
    assert slug.instruction.startswith("Make `slugify(text)`")
    assert slug.repo == slug.folder / "environment" / "repo"
    assert (slug.tests / "test.sh").is_file() and (slug.solution / "solve.sh").is_file()


def copy_task(tmp_path: Path, name: str = "slugify") -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: (t / "instruction.md").unlink(), "instruction.md is missing"),
        (lambda t: (t / "instruction.md").write_text("  \n"), "instruction.md is empty"),
        (lambda t: (t / "task.toml").write_text("[autopilot_codex\n"), "task.toml:"),
        (lambda t: (t / "task.toml").write_text('[autopilot_codex]\nkind = "x"\n'), "kind must be"),
        (
            lambda t: (t / "task.toml").write_text(
                '[autopilot_codex]\nkind = "question"\nbudget_usd = 0\n'
            ),
            "budget_usd must be a positive number",
        ),
        (
            lambda t: (t / "task.toml").write_text(
                '[autopilot_codex]\nkind = "question"\nanswers = { a = 1 }\n'
            ),
            "answers must map strings to strings",
        ),
        (lambda t: (t / "task.toml").write_text('agent = 3\n[autopilot_codex]\nkind = "refactor"\n'), "[agent] must be a table"),
    ],
)
def test_a_broken_task_is_named(tmp_path: Path, edit: object, message: str) -> None:
    folder = copy_task(tmp_path)
    assert callable(edit)
    edit(folder)
    with pytest.raises(tasks.TaskError, match=message.replace("[", r"\[").replace("]", r"\]")):
        tasks.load(folder)


def test_question_answers_are_read(tmp_path: Path) -> None:
    folder = copy_task(tmp_path)
    (folder / "task.toml").write_text(
        '[autopilot_codex]\nkind = "question"\nanswers = { "format" = "ISO 8601" }\n'
    )
    assert tasks.load(folder).answers == {"format": "ISO 8601"}


def test_an_empty_folder_has_no_task(tmp_path: Path) -> None:
    with pytest.raises(tasks.TaskError, match="no task"):
        tasks.discover(tmp_path)


def test_the_fixtures_do_not_leak() -> None:
    for task in tasks.discover(FIXTURES):
        assert leaks.leaks(task.folder) == []


def test_a_hidden_test_copied_into_the_repo_leaks_by_name_and_by_content(tmp_path: Path) -> None:
    folder = copy_task(tmp_path)
    hidden = folder / "tests" / "test_slug_hidden.py"
    shutil.copy(hidden, folder / "environment" / "repo" / "test_slug_hidden.py")
    assert leaks.own_leaks(folder) == [
        "hidden test test_slug_hidden.py leaks into test_slug_hidden.py"
    ]
    (folder / "environment" / "repo" / "test_slug_hidden.py").unlink()
    deep = folder / "environment" / "repo" / "pkg"
    deep.mkdir()
    # Renamed, with Windows line endings: still the same test.
    (deep / "check.py").write_bytes(hidden.read_bytes().replace(b"\n", b"\r\n"))
    assert "hidden test test_slug_hidden.py leaks into pkg/check.py" in leaks.leaks(folder)
