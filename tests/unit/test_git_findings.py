"""What in a repository's git directory is reported as running a program or hiding a change:
each rule of `gitrepo.tamper` on a real repository, both ways (reported and left alone)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from autopilot_codex import gitrepo
from autopilot_codex.gitrepo import tamper
from tests.conftest import git, make_repo


def lines(repo: Path, *, own: tuple[str, ...] = ()) -> list[str]:
    return [f.line() for f in gitrepo.findings(repo, own_excludes=own)]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("core.pager", "less -R", "config core.pager: runs 'less -R'"),
        ("core.pager", "false", None),
        ("core.pager", " Off ", None),
        ("alias.st", "!sh -c evil", "config alias.st: runs '!sh -c evil'"),
        ("alias.st", "status -s", None),
        ("Diff.Tool X.TextConv", "cat", "config diff.Tool X.textconv: runs 'cat'"),
        ("core.filemode", "false", "config core.filemode: can hide changes: 'false'"),
        ("core.filemode", " TRUE", None),
        ("diff.x.binary", "true", "config diff.x.binary: can hide changes: 'true'"),
        (
            "status.showuntrackedfiles",
            "no",
            "config status.showuntrackedfiles: can hide changes: 'no'",
        ),
        ("status.showuntrackedfiles", "all", None),
        ("user.name", "someone", None),
    ],
)
def test_a_config_key_is_reported_only_when_it_runs_or_hides(
    tmp_path: Path, key: str, value: str, expected: str | None
) -> None:
    repo = make_repo(tmp_path / "r")
    git(repo, "config", key, value)
    found = lines(repo)
    assert found == ([expected] if expected else []), found


def test_sample_hooks_are_not_reported_and_real_ones_are(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit.sample").write_text("#!/bin/sh\n")
    assert lines(repo) == []
    (hooks / "post-checkout").write_text("#!/bin/sh\n")
    (hooks / "pre-commit").write_text("#!/bin/sh\n")
    assert lines(repo) == [
        "hook hooks/post-checkout: runs on git commands",
        "hook hooks/pre-commit: runs on git commands",
    ]


def test_info_rules_skip_comments_blanks_and_the_bridge_s_own(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    info = repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "exclude").write_text("# a comment\n\n.autopilot/\nsecret.txt\n")
    (info / "attributes").write_text("* -diff\n")
    assert lines(repo, own=(".autopilot/",)) == [
        "attributes info/attributes: '* -diff' sets filters, diff drivers or binary flags",
        "exclude info/exclude: 'secret.txt' hides untracked files",
    ]


def test_the_bridge_s_own_command_line_settings_are_not_findings(tmp_path: Path) -> None:
    # The runner passes its overrides with `-c` (scope "command"): they are no tampering.
    repo = make_repo(tmp_path / "r")
    assert tamper._config(repo) == []


def test_a_flagged_path_is_a_finding_in_path_order() -> None:
    got = tamper.flag_findings({"b.py": "assume-unchanged", "a.py": "skip-worktree"})
    assert [f.line() for f in got] == ["flag a.py: skip-worktree", "flag b.py: assume-unchanged"]


def test_a_caseless_section_keeps_its_subsection() -> None:
    assert tamper._generic("Filter.LFS Thing.Clean") == "filter.LFS Thing.clean"


def test_no_hooks_folder_and_no_attributes_file_are_no_findings(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    shutil.rmtree(repo / ".git" / "hooks", ignore_errors=True)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").unlink(missing_ok=True)
    assert lines(repo) == []
    (repo / ".git" / "info" / "exclude").write_text("hidden.txt\n")
    assert lines(repo) == ["exclude info/exclude: 'hidden.txt' hides untracked files"]


def test_a_finding_is_a_value_not_a_record_to_edit() -> None:
    (finding,) = tamper.flag_findings({"a.py": "skip-worktree"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.detail = ""  # type: ignore[misc]


def test_a_config_git_cannot_read_is_itself_a_finding(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / ".git" / "config").write_text("[core\n\tbroken = \n")
    (finding,) = tamper._config(repo)
    assert (finding.kind, finding.where) == ("config", "config")
    assert finding.detail.startswith("unreadable: ")
