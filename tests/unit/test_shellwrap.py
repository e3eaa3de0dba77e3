"""Unwrapping one simple command: each wrapper's own options, and what it hands on to run.

Written from the mutation audit of `rails/shellwrap.py`: each case fails when one comparison,
boundary or option of a wrapper is changed.
"""

from __future__ import annotations

import pytest

from autopilot_codex.rails.shellwrap import unwrap

PUSH = ["git", "push", "-f"]


@pytest.mark.parametrize(
    ("argv", "wrappers"),
    [
        # `--` ends a wrapper's options; the command follows it
        (["sudo", "--", *PUSH], ["sudo"]),
        (["nice", "-n", "5", "--", *PUSH], ["nice"]),
        # a long option of a shell is not a cluster of short ones (`--norc` holds no `-c`)
        (["bash", "--norc", "bin/git", "push", "-f"], ["bash"]),
        # sudo's options that take a value (`-g GROUP`); doas has fewer
        (["sudo", "-g", "wheel", *PUSH], ["sudo"]),
    ],
)
def test_the_wrapped_command_is_found(argv: list[str], wrappers: list[str]) -> None:
    found = unwrap(argv)
    assert (found.argv, found.wrappers, found.scripts) == (PUSH, wrappers, [])


@pytest.mark.parametrize(
    "argv",
    [
        ["env", "--", *PUSH],
        ["env", "--split-string=git push -f"],
        ["env", "-S", "-i git push -f"],
        ["env", "-Sgit push -f"],
    ],
)
def test_env_hands_on_what_follows_its_options(argv: list[str]) -> None:
    assert unwrap(argv).argv == PUSH


def test_what_env_unsets_counts_as_assigned() -> None:
    found = unwrap(["env", "-uAUTOPILOT_CODEX_HOME", "-u", "A", "B=1=2", "git", "status"])
    assert (found.argv, found.assigned) == (["git", "status"], ["AUTOPILOT_CODEX_HOME", "A", "B"])


def test_an_alias_is_judged_as_its_whole_value() -> None:
    assert unwrap(["alias", "g=A=1 git push -f"]).scripts == ["A=1 git push -f"]


def test_unwrapping_stops_after_16_wrappers_and_says_so() -> None:
    # 16 is the figure the rails' table documents (`unreadable`).
    found = unwrap(["nohup"] * 16 + PUSH)
    assert (found.argv, found.too_deep) == (PUSH, False)
    found = unwrap(["nohup"] * 17 + PUSH)
    assert found.too_deep and found.argv != PUSH


def test_env_takes_the_word_after_its_double_dash_as_the_program() -> None:
    # `env -- -u X` runs a program named `-u`: after `--` nothing is an option of env.
    assert unwrap(["env", "--", "-u", "X"]).argv == ["-u", "X"]


def test_a_string_with_an_open_quote_is_split_on_blanks() -> None:
    assert unwrap(["env", "-S", "git push -f '"]).argv == [*PUSH, "'"]


def test_each_find_exec_runs_its_own_command() -> None:
    found = unwrap(["find", ".", "-exec", "echo", "{}", "+", "-exec", *PUSH, ";"])
    assert found.scripts == ["echo '{}'", "git push -f"]


def test_xargs_replaces_the_string_its_dash_i_names() -> None:
    assert unwrap(["xargs", "-I", "X", "git", "X", "-f"], "push").argv == PUSH


def test_sudo_keeps_the_assignments_before_its_command() -> None:
    found = unwrap(["sudo", "A=1", "B=2", *PUSH])
    assert (found.argv, found.assigned) == (PUSH, ["A", "B"])
