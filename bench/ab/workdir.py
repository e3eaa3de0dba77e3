"""A trial's places: the work tree (a fresh git repository made from the task's starting
repository), the hidden tests' copy (outside the work tree, on the wall's list of what the
implementer may not read) and the verifier that runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .tasks import Task

IDENTITY = {"user.name": "bench-ab", "user.email": "bench-ab@example.invalid"}
# Under a trial's folder: the verifier's own temporary folder, holding the hidden tests' copy
# and the reward file; on the implementer's wall's list of what it may not read.
VERIFIER = "verifier"


class TrialSetupError(RuntimeError):
    """The trial could not be set up fairly (a leak, a git failure): it is not run."""


def git_env(base: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    return env


def _git(repo: Path, env: Mapping[str, str], *args: str) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=git_env(env),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if proc.returncode != 0:
        raise TrialSetupError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def make_repo(task: Task, work: Path, env: Mapping[str, str]) -> str:
    """Copy the task's starting repository to `work`, make it a repository with one commit;
    the commit's sha."""
    shutil.copytree(task.repo, work, symlinks=True)
    _git(work, env, "init", "-q", "-b", "main")
    for key, value in IDENTITY.items():
        _git(work, env, "config", key, value)
    _git(work, env, "config", "commit.gpgsign", "false")
    _git(work, env, "add", "-A")
    _git(work, env, "commit", "-q", "--no-verify", "-m", "task: starting repository")
    return _git(work, env, "rev-parse", "HEAD").strip()


def hide_tests(task: Task, verifier: Path) -> Path:
    """The hidden tests copied into the verifier's folder (outside the work tree)."""
    hidden = verifier / "tests"
    shutil.copytree(task.tests, hidden)
    return hidden


@dataclass(frozen=True)
class Verdict:
    resolved: bool
    output: str


def verify(task: Task, hidden: Path, work: Path, env: Mapping[str, str]) -> Verdict:
    """Run the task's verifier (its `tests/test.sh`, from the hidden copy) over the work tree;
    resolved when it wrote 1 to the reward file beside the copy.

    The verifier runs the implementer's code, so it runs as the product runs the user's checks
    (`sandbox.check_command`): the work tree and its own folder writable, no network, no key,
    no credential store; its environment names the three places and nothing of the caller's."""
    from autopilot_codex.sandbox import check_command

    folder = hidden.parent
    reward = folder / "reward.txt"
    reward.unlink(missing_ok=True)
    run_env = {
        "PATH": env.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "HOME": env.get("HOME") or os.path.expanduser("~"),
        "TMPDIR": str(folder),
        # No bytecode left in the work tree the trial's record points at.
        "PYTHONDONTWRITEBYTECODE": "1",
        "AB_TESTS_DIR": str(hidden),
        "AB_WORK_DIR": str(work),
        "AB_REWARD_FILE": str(reward),
    }
    command = check_command(["bash", str(hidden / "test.sh")], str(work), run_env)
    try:
        proc = subprocess.run(
            command,
            cwd=work,
            env=run_env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=task.verifier_timeout_s,
            check=False,
        )
        output = (proc.stdout + proc.stderr)[-4000:]
    except subprocess.TimeoutExpired:
        return Verdict(False, "the verifier timed out")
    text = reward.read_text(encoding="utf-8").strip() if reward.is_file() else ""
    return Verdict(text == "1", output)
