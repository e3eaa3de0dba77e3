"""A program the bridge looks up on PATH is never one in a folder the implementer writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autopilot_codex import searchpath
from autopilot_codex.rounds import runner


def plant(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\nexit 0\n")
    (folder / name).chmod(0o755)
    return folder / name


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()
    return tmp_path / "repo"


def test_entries_the_implementer_writes_are_dropped(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "tools"
    outside.mkdir()
    (tmp_path / "alias").symlink_to(tree)
    path = os.pathsep.join(
        [
            "",
            ".",
            "node_modules/.bin",
            str(tree / "bin"),
            f"{tree}//sub/../bin",
            str(tmp_path / "alias" / "bin"),
            str(tree),
            str(outside),
            "/usr/bin",
        ]
    )
    assert searchpath.trusted_path(path, tree / "sub") == f"{outside}:/usr/bin"
    assert searchpath.trusted_path("node_modules/.bin:.", tree) == searchpath.FALLBACK


def test_the_rounds_driver_never_starts_a_host_cli_planted_in_the_tree(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for folder in (tree / "sub" / "node_modules" / ".bin", tree / "bin"):
        plant(folder, "claude")
    real = plant(tmp_path / "tools", "claude")
    env = {"PATH": f"node_modules/.bin:{tree}/bin:{real.parent}"}
    cwd = tree / "sub"
    monkeypatch.chdir(cwd)  # a relative entry resolves against the driver's own folder too
    cmd = runner._dies_with_driver(["claude", "-p"], env, cwd)
    assert str(real) in cmd
    assert not any(str(tree) in word for word in cmd)


def test_a_folder_outside_a_work_tree_or_a_tree_holding_the_home_keeps_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `install` run from the home keeps ~/.local/bin, where Claude Code puts `claude`; so does
    # a home that is itself a repository (its writes there reach your shell anyway).
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    path = f"{home}/.local/bin:/usr/bin"
    assert searchpath.trusted_path(path, home) == path
    (home / ".git").mkdir()
    assert searchpath.trusted_path(path, home) == path
