"""The files git and the hosts run programs from: each host's list, the patterns, the scan of a
worktree and the words for what changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autopilot_codex import hosts, nofollow
from autopilot_codex.runfiles import changes, matches, nested_git, scan
from autopilot_codex.wall import GIT_RUN_FILES, literal

RUN = hosts.roster().run_files()


def test_each_host_brings_its_own_list_and_git_has_its_own() -> None:
    assert hosts.get("claude").run_files == (".mcp.json", "**/.claude/**")
    assert hosts.get("codex").run_files == ("**/.codex/**", "**/.agents/**")
    assert {"**/.git/config", "**/.git/hooks/**", "**/.gitmodules"} <= set(GIT_RUN_FILES)
    # Every registered host's list is in the one the wall and the comparison use.
    for host in hosts.every():
        assert set(host.run_files) <= set(RUN)


@pytest.mark.parametrize(
    "rel",
    [
        ".mcp.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude/skills/x/SKILL.md",
        "pkg/.claude/agents/a.md",
        ".codex/config.toml",
        "sub/.codex/hooks.json",
        ".agents/skills/s/SKILL.md",
        ".git/config",
        ".git/hooks/pre-commit",
        "vendor/dep/.git/config",
        "vendor/dep/.git/hooks/post-checkout",
        ".git/modules/lib/config",
        ".git/modules/lib/nested/hooks/pre-commit",
        "vendor/dep/.git",
        ".gitmodules",
        "a/b/.gitmodules",
        "./.mcp.json",
    ],
)
def test_run_files_match_at_every_depth_they_are_read(rel: str) -> None:
    assert matches(rel, RUN)


@pytest.mark.parametrize(
    "rel",
    [
        "docs/mcp.json.md",
        "docs/.mcp.json",  # Claude Code reads the project's own, at the top
        "README.md",
        ".git/HEAD",
        ".git/objects/ab/cdef",
        ".gitattributes",
        "src/config",
        "mcp.json",
    ],
)
def test_other_files_do_not_match(rel: str) -> None:
    assert not matches(rel, RUN)


def test_the_literal_top_of_each_pattern() -> None:
    assert [literal(p) for p in RUN] == [
        ".git/config", ".git/commondir", ".git/config.worktree", ".git/hooks", ".git/modules",
        ".git/modules", ".git", ".gitmodules",
        ".mcp.json", ".claude", ".codex", ".agents",
    ]  # fmt: skip


def write(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    write(root / ".git" / "config", "[core]\n")
    write(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    write(root / ".git" / "objects" / "ab" / "cd", "blob")
    write(root / ".git" / "hooks" / "pre-commit.sample")
    write(root / ".git" / "modules" / "lib" / "config")
    write(root / ".git" / "modules" / "lib" / "objects" / "x" / "config")  # not a config
    write(root / ".claude" / "settings.json", "{}")
    write(root / "docs" / "setup.md", "Put your servers in .mcp.json\n")
    write(root / "vendor" / "dep" / ".git" / "config", "[core]\n")
    write(root / "wt2" / ".git", "gitdir: /elsewhere\n")
    return root


def test_the_scan_finds_every_run_file_and_nothing_else(tree: Path) -> None:
    found = scan(tree, RUN)
    assert sorted(found) == [
        ".claude/settings.json",
        ".git/config",
        ".git/hooks/pre-commit.sample",
        ".git/modules/lib/config",
        "vendor/dep/.git/config",
        "wt2/.git",
    ]
    assert all(d.startswith("sha256:") for d in found.values())


def test_a_link_is_recorded_as_a_link_never_followed(tree: Path) -> None:
    outside = write(tree.parent / "evil.json", "{}")
    (tree / ".mcp.json").symlink_to(outside)
    (tree / ".codex").symlink_to(tree.parent)  # a folder link: not walked
    found = scan(tree, RUN)
    assert found[".mcp.json"] == f"link:{outside}"
    assert found[".codex"] == f"link:{tree.parent}"


def test_an_unreadable_or_special_file_still_counts(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(tree / ".claude" / "pipe")

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Root reads a file of mode 000 anyway: the refusal is played here.
    monkeypatch.setattr(nofollow, "reading", refused)
    found = scan(tree, RUN)
    assert found[".claude/pipe"] == "special"
    assert found[".claude/settings.json"] == "unreadable:PermissionError"


def test_an_unreadable_folder_is_passed_over(tree: Path) -> None:
    assert "x" not in scan(tree / "missing", RUN)


def test_nested_git_directories(tree: Path) -> None:
    (tree / "vendor" / "dep" / "inner" / ".git").mkdir(parents=True)
    assert nested_git(tree) == (
        tree / "vendor" / "dep" / ".git",
        tree / "vendor" / "dep" / "inner" / ".git",
    )


def test_changes_in_words() -> None:
    before = {"a": "1", "b": "2", "c": "3"}
    after = {"a": "1", "b": "9", "d": "4"}
    assert changes(before, after) == ["d (added)", "b (changed)", "c (removed)"]
    assert changes(before, before) == []


def test_an_empty_file_reads_as_no_file(tree: Path) -> None:
    # Claude Code's sandbox makes an empty file where a path it denies is missing (a mount
    # point): `.git/config.worktree` appeared between the plan and the session's start and
    # stopped every loop in a walled session. An empty file runs nothing and sets nothing.
    before = scan(tree, GIT_RUN_FILES)
    (tree / ".git" / "config.worktree").write_bytes(b"")
    (tree / ".git" / "commondir").write_bytes(b"")
    assert changes(before, scan(tree, GIT_RUN_FILES)) == []
    # What it then holds is a change, and so is a file emptied.
    (tree / ".git" / "config.worktree").write_text("[core]\n\tfsmonitor = ./x\n")
    assert changes(before, scan(tree, GIT_RUN_FILES)) == [".git/config.worktree (added)"]
    (tree / ".git" / "config").write_bytes(b"")
    assert ".git/config (removed)" in changes(before, scan(tree, GIT_RUN_FILES))
