"""The driver's commit for a round runs no signing program the round named: a round sets
`commit.gpgSign` and points `gpg.program` (or, with `gpg.format=ssh`, `gpg.ssh.program`) at a
program of its own in the repository's config. The round's config change ends the run
(`hostfiles`), but the commit of that round's work is made first: it must run nothing. The
control: the user's own git, committing in that repository, runs the program.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Script, git
from tests.integration.test_rounds_driver import EXIT, drive

SIGNERS = {
    "gpg": ("gpg.format=openpgp", "gpg.program"),
    "ssh": ("gpg.format=ssh", "gpg.ssh.program"),
}


def _signer(tmp_path: Path) -> tuple[Path, Path]:
    canary = tmp_path / "canary"
    program = tmp_path / "signer.sh"
    program.write_text(f'#!/bin/sh\necho "$@" >> {canary}\nexit 1\n')
    program.chmod(0o755)
    return program, canary


def _plant(kind: str, program: Path) -> str:
    fmt, key = SIGNERS[kind]
    name, value = fmt.split("=")
    return " && ".join(
        [
            f"git config {name} {value}",
            f"git config {key} {shlex.quote(str(program))}",
            "git config user.signingKey someone",
            "git config commit.gpgSign true",
        ]
    )


@pytest.mark.parametrize("kind", sorted(SIGNERS))
def test_control_the_users_git_runs_the_planted_signer(
    repo: Path, tmp_path: Path, kind: str
) -> None:
    program, canary = _signer(tmp_path)
    subprocess.run(["bash", "-c", _plant(kind, program)], cwd=repo, check=True)
    (repo / "x.txt").write_text("x\n")
    git(repo, "add", "x.txt")
    done = subprocess.run(["git", "commit", "-qm", "x"], cwd=repo, capture_output=True)
    assert done.returncode != 0 and canary.exists()


@pytest.mark.parametrize("kind", sorted(SIGNERS))
def test_the_drivers_commit_runs_no_signer_the_round_named(
    repo: Path, script: Script, tmp_path: Path, kind: str
) -> None:
    program, canary = _signer(tmp_path)
    step = {
        "write": {"hello.txt": "hello\n"},
        "shell": _plant(kind, program),
        "say": "Added hello.txt.\n::potter(ready)",
    }
    script([step, EXIT])
    base = git(repo, "rev-parse", "HEAD")
    code, record = drive(repo)
    assert (code, record["status"]) == (1, "tampered")
    assert not canary.exists()
    assert git(repo, "rev-list", "--count", f"{base}..HEAD") == "1"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").splitlines() == ["hello.txt"]
