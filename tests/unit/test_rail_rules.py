"""The rules' edges, one simple command each: what a rule denies and the neighbour it lets run.

Written from the mutation audit of `rails/rules.py`: each case fails when one comparison,
boundary or flag of a matcher is changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.config import Config
from autopilot_codex.rails import rules
from autopilot_codex.rails.rules import resolve
from tests.rails_calls import check_command


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    (root / "build").mkdir(parents=True)
    return root


def rule_of(command: str, worktree: Path) -> str | None:
    """The id of the rule denying `command` in the worktree's root, or None."""
    reason = check_command(command, Config(), worktree, str(worktree))
    if reason is None:
        return None
    return reason[reason.index("[") + 1 : reason.index("]")]


DENIED = [
    ("printenv OPENAI_API_KEY", "secret-env"),
    ("printenv -0", "secret-env"),
    ("set", "secret-env"),
    ("export -p", "secret-env"),
    ("declare -px", "secret-env"),
    ("compgen -e", "secret-env"),
    ("git checkout -f", "checkout-discard"),
    ("git checkout --force main", "checkout-discard"),
    # staged and worktree both restored: the tree's changes are gone
    ("git restore -SW .", "checkout-discard"),
    ("git restore --staged --worktree .", "checkout-discard"),
    # a shell reading its script from the pipe: `-s` with arguments, or only long options
    ("cat x | bash -s arg", "unreadable"),
    ("cat x | bash --norc", "unreadable"),
    ("cat x | source /dev/stdin", "unreadable"),
    ("cat x | bash /dev/stdin arg", "unreadable"),
    # git's unique prefixes and short clusters
    ("git push --for origin main", "force-push"),
    ("git clean -f", "clean"),
    ("git switch -f main", "checkout-discard"),
    ("git switch --discard-changes main", "checkout-discard"),
    # a verb after options, one taking a value, or of two words
    ("docker --context prod push app", "publish"),
    ("cargo -v publish", "publish"),
    ("docker image push app:1", "publish"),
    ("kubectl -n prod delete pod x", "infra"),
    ("rm -rf $UNKNOWN/build", "rm"),
    ("kubectl config view --raw", "credentials"),
    # a `--dry-run` makes a publish or an infrastructure change harmless, not a credential read
    ("gh auth token --dry-run", "credentials"),
    ("kubectl delete pod x --dry-run=none", "infra"),
    # a credential read by arithmetic, or through a nameref given its target later
    ("echo $((OPENAI_API_KEY))", "secret-env"),
    ("declare -n r; r=OPENAI_API_KEY; echo $r", "secret-env"),
]

ALLOWED = [
    # printenv of one harmless name prints that name only
    "printenv HOME",
    "printenv -0 HOME PATH",
    # a credential's name as a plain word is not its value
    "echo OPENAI_API_KEY",
    "set -e",
    "export A=1",
    "compgen -c",
    # restoring one file discards that file's changes, not the tree's
    "git restore src/a.py",
    "git restore --staged .",
    "cat x | bash -c 'echo hi'",
    "cat x | bash script.sh",
    "cat x | bash -sc 'echo hi'",
    "docker --context push build .",
    "git restore -S .",
    # `declare -p` of a harmless name; `-p` of a program that is no declaration
    "declare -p HOME",
    "mkdir -p GITHUB_TOKEN",
    # dry runs change nothing
    "kubectl delete pod x --dry-run=client",
    "npm publish --dry-run",
    "git push --force --dry-run origin main",
    "git push -fn origin main",
]


@pytest.mark.parametrize(("command", "rule"), DENIED)
def test_denied(command: str, rule: str, worktree: Path) -> None:
    assert rule_of(command, worktree) == rule


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(command: str, worktree: Path) -> None:
    assert rule_of(command, worktree) is None


def test_a_path_that_cannot_be_resolved_is_normalised_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative path needs the process's own directory, which may have been removed.
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert resolve("x/../y", "rel") == Path("rel/y")
    assert resolve("a\0b", "/wt") == Path("/wt/a\0b")


def test_the_temporary_folders_are_tmpdir_else_python_s_own_and_tmp_and_var_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    fixed = {resolve("/tmp", "/"), resolve("/var/tmp", "/")}
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "python"))
    assert rules.temp_roots() == sorted({tmp_path / "python", *fixed})
    monkeypatch.setenv("TMPDIR", f" {tmp_path / 'mine'} ")
    assert rules.temp_roots() == sorted({tmp_path / "mine", *fixed})
