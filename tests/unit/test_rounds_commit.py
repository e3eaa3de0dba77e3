"""The driver's commit of a round: its message, what it leaves out, no hook it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.rounds.commit import SUBJECT_MAX, commit_round, message, subject
from tests.conftest import git, make_repo


def test_the_subject_is_the_final_messages_first_line_bounded() -> None:
    assert subject("\n## Added the parser\nmore text\n::potter(ready)", 3) == "Added the parser"
    assert subject("::potter(exit)", 4) == "autopilot-codex round 4"
    long = subject("x " * 200, 1)
    assert len(long) <= SUBJECT_MAX and long.endswith("…")
    body = message("Fixed it.", 2, "run-a")
    assert body.splitlines() == [
        "Fixed it.",
        "",
        "Autopilot-Codex-Round: 2",
        "Autopilot-Codex-Run: run-a",
    ]


def test_nothing_left_is_no_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    head = git(repo, "rev-parse", "HEAD")
    assert commit_round(repo, "Done.", 1, "run").sha == ""
    assert git(repo, "rev-parse", "HEAD") == head


def test_secrets_and_the_run_folder_stay_out_even_when_staged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / "a.txt").write_text("a\n")
    (repo / "id_rsa").write_text("key\n")
    (repo / ".autopilot-codex").mkdir()
    (repo / ".autopilot-codex" / "notes.md").write_text("n\n")
    git(repo, "add", "-f", "id_rsa", ".autopilot-codex/notes.md")
    done = commit_round(repo, "Added a.", 1, "run")
    assert done.sha == git(repo, "rev-parse", "HEAD") and done.left_out == ("id_rsa",)
    assert git(repo, "show", "--name-only", "--format=", "HEAD") == "a.txt"


def test_a_first_commit_in_an_empty_repository(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    (repo / ".env").write_text("X=1\n")
    git(repo, "add", "-A")
    done = commit_round(repo, "First.", 1, "run")
    assert done.sha and git(repo, "show", "--name-only", "--format=", "HEAD") == "a.txt"
    assert git(repo, "status", "--porcelain") == "?? .env"


def test_the_commit_takes_the_users_identity_from_their_own_git_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hardened runner reads no global config; who commits still comes from it."""
    repo = make_repo(tmp_path / "r")
    for var in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{var}_NAME", raising=False)
        monkeypatch.delenv(f"GIT_{var}_EMAIL", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Global User\n\temail = global@example.com\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    (repo / "b.txt").write_text("b\n")
    assert commit_round(repo, "Added b.", 1, "run").sha
    who = git(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>")
    assert who == "Global User <global@example.com> / Global User <global@example.com>"


def test_a_name_that_reads_as_pathspec_magic_unstages_only_itself(tmp_path: Path) -> None:
    # A file the round named `:(glob)*` is unstaged by its name: read as a pathspec it would
    # match every path, and the round's whole work would be left out of its commit.
    from autopilot_codex.rounds.commit import _unstage

    repo = make_repo(tmp_path / "r")
    (repo / "a.txt").write_text("a\n")
    (repo / ":(glob)*").write_text("x\n")
    git(repo, "add", "-A")
    _unstage(repo, [":(glob)*"])
    staged = git(repo, "diff", "--cached", "--name-only").splitlines()
    assert staged == ["a.txt"], staged
