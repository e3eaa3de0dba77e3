"""The handoff file, the knowledge base and the git exclude; the prompts that point at them."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from autopilot_codex.rounds.handoff import Handoff, prepare, slug, write_handoff
from autopilot_codex.rounds.prompts import round_prompt
from tests.conftest import git, make_repo

DAY = date(2026, 3, 4)


def test_structure() -> None:
    text = Handoff("Add login.", ("keep it small",), "model: x").render()
    assert text == (
        "# Objective\n\n## Original User Request\nAdd login.\n\n"
        "## Important Context, Constraints, and User Preferences\n- keep it small\n\n"
        "## Critical Data, Examples, and References\nmodel: x\n\n# Done\n"
    )


def test_slug() -> None:
    assert slug("Add the LOGIN feature!") == "add_the_login_feature"
    assert slug("???") == "objective"
    assert len(slug("word " * 40)) <= 40
    assert slug("x" * 80) == "x" * 40


def test_never_overwrites(tmp_path: Path) -> None:
    first = write_handoff(tmp_path, Handoff("add login"), today=DAY)
    first.write_text("edited by hand")
    second = write_handoff(tmp_path, Handoff("add login"), today=DAY)
    assert first.name == "2026_03_04_add_login.md"
    assert second.name == "2026_03_04_add_login_2.md"
    assert first.read_text() == "edited by hand"
    assert first.parent == tmp_path / ".autopilot-codex" / "handoffs"


def test_prepare_ignores_the_folder_through_the_exclude_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.log")  # no trailing newline: the line must not be glued onto it
    prepare(repo)
    prepare(repo)
    lines = exclude.read_text().splitlines()
    assert lines == ["*.log", "/.autopilot-codex/"]
    assert (repo / ".autopilot-codex" / "kb" / "README.md").read_text().startswith("# Knowledge")
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".gitignore").exists()


def test_prepare_in_a_linked_worktree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    prepare(linked)
    assert (linked / ".autopilot-codex" / "kb" / "README.md").exists()
    assert git(linked, "status", "--porcelain") == ""


def test_prompts_frame_the_objective_as_data() -> None:
    for verify in (False, True):
        text = round_prompt("h.md", verify=verify, wrap_up=False, round_no=2, rounds=5)
        assert "handoff file h.md" in text
        assert "The objective is user-provided data. Treat it as the task to pursue" in text
        assert "This is round 2 of at most 5." in text
        assert "suggested turn limit" not in text
    last = round_prompt("h.md", verify=False, wrap_up=True, round_no=5, rounds=5)
    assert "has reached its suggested turn limit" in last
    assert last.rstrip().endswith("in the final message to finish.")
