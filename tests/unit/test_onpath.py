"""`autopilot-codex` put on the user's PATH after an install: a link in a user bin folder that
is on PATH, or one line saying what to do; never a shell startup file."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.commands.onpath import NAME, put_on_path


@pytest.fixture
def launcher(tmp_path: Path) -> Path:
    path = tmp_path / "plugin" / "bin" / NAME
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def user_bin(home: Path) -> Path:
    folder = home / ".local" / "bin"
    folder.mkdir(parents=True)
    return folder


def test_a_link_to_a_moved_checkout_is_replaced(tmp_path: Path, launcher: Path) -> None:
    home = tmp_path / "home"
    folder = user_bin(home)
    (folder / NAME).symlink_to(tmp_path / "gone" / "bin" / NAME)
    line = put_on_path({"PATH": str(folder), "HOME": str(home)}, launcher)
    assert line.startswith(f"  PATH: linked {folder / NAME} -> {launcher}")
    assert (folder / NAME).resolve() == launcher.resolve()
    # Run again: the link is found, nothing changes.
    again = put_on_path({"PATH": str(folder), "HOME": str(home)}, launcher)
    assert again == f"  PATH: `{NAME}` is {folder / NAME}"


def test_a_link_found_off_path_is_named_and_someone_else_s_file_is_kept(
    tmp_path: Path, launcher: Path
) -> None:
    home = tmp_path / "home"
    folder = user_bin(home)
    (folder / NAME).symlink_to(launcher)
    first = tmp_path / "first"
    first.mkdir()
    other = first / NAME
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    # An older install comes first on PATH; ours is linked already behind it.
    env = {"PATH": f"{first}:{folder}", "HOME": str(home)}
    assert (
        put_on_path(env, launcher) == f"  PATH: `{NAME}` is {folder / NAME} (a link to {launcher})"
    )
    # A file of the user's in the bin folder is never replaced.
    (folder / NAME).unlink()
    (folder / NAME).write_text("mine\n")
    line = put_on_path(env, launcher)
    assert line == f"  PATH: `{NAME}` on your PATH is {other}, not this install ({launcher})"
    assert (folder / NAME).read_text() == "mine\n"


def test_a_new_link_behind_another_install_says_which_comes_first(
    tmp_path: Path, launcher: Path
) -> None:
    home = tmp_path / "home"
    folder = user_bin(home)
    first = tmp_path / "first"
    first.mkdir()
    (first / NAME).write_text("#!/bin/sh\n")
    (first / NAME).chmod(0o755)
    line = put_on_path({"PATH": f"{first}:{folder}", "HOME": str(home)}, launcher)
    assert f"but {first / NAME} comes first on PATH" in line
    assert (folder / NAME).resolve() == launcher.resolve()


def test_with_no_user_bin_on_path_it_says_what_to_add(tmp_path: Path, launcher: Path) -> None:
    home = tmp_path / "home"
    user_bin(home)  # exists, but not on PATH: never linked there
    line = put_on_path({"PATH": str(tmp_path / "empty"), "HOME": str(home)}, launcher)
    assert "is not on your PATH" in line and f'export PATH="{launcher.parent}:$PATH"' in line
    assert not (home / ".local" / "bin" / NAME).exists()


def test_a_link_that_loops_is_someone_else_s_and_kept(tmp_path: Path, launcher: Path) -> None:
    home = tmp_path / "home"
    folder = user_bin(home)
    (folder / NAME).symlink_to(folder / "other")
    (folder / "other").symlink_to(folder / NAME)
    line = put_on_path({"PATH": str(folder), "HOME": str(home)}, launcher)
    assert line.startswith(f"  PATH: `{NAME}` is not on your PATH.")
    assert (folder / NAME).readlink() == folder / "other"
