"""rounds with the user's checks: a verifier's exit ends the run only when they pass."""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path
from typing import Any

from autopilot_codex.commands.run import main
from autopilot_codex.rounds import rollout
from autopilot_codex.rounds.driver import custody_for
from tests.conftest import ROOT
from tests.integration.test_rounds_driver import Script

FAKE = ROOT / "tests" / "fakes" / "fake_host.py"


def rollout_path(repo: Path) -> Path:
    """The run's rollout: in the state home, never in the worktree."""
    return custody_for(repo).path


READY = {"write": {"hello.txt": "hello\n"}, "commit": "add hello", "say": "Done.\n::potter(ready)"}
EXIT = {"say": "Every requirement checked.\n::potter(exit)"}
FIX = {"write": {"ok.txt": "ok\n"}, "commit": "add ok", "say": "Fixed.\n::potter(ready)"}
CHECK = "test -f ok.txt || { echo 'ok.txt is missing'; exit 1; }"


def drive(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    argv = ["add the files", "--implementer", "claude", "--cwd", str(repo), "--json", *args]
    code = main(argv, stdout=out)
    return code, json.loads(out.getvalue())


def test_a_verifier_exit_with_red_checks_is_not_completion(repo: Path, script: Script) -> None:
    path = script([READY, EXIT, FIX, EXIT])
    code, record = drive(repo, "--check", CHECK)
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 4)
    log = rollout.last_run(rollout_path(repo))
    assert log is not None and log.header.checks[0].command == CHECK
    first_exit, last_exit = log.rounds[1], log.rounds[3]
    assert (first_exit.checks_passed, first_exit.next) == (False, "continue")
    assert "FAILED" in first_exit.checks[0]
    assert (last_exit.checks_passed, last_exit.next) == (True, "complete")
    # The next round is told what failed.
    prompts = [
        json.loads(x)["prompt"] for x in Path(f"{path}.calls.jsonl").read_text().splitlines()
    ]
    assert "ok.txt is missing" in prompts[2] and "ok.txt is missing" not in prompts[1]


def test_checks_run_only_at_a_verifier_exit(repo: Path, script: Script, tmp_path: Path) -> None:
    # In the git directory: the check's sandbox lets it write the work tree, not tmp_path.
    counter = repo / ".git" / "runs"
    script([READY, EXIT])
    code, record = drive(repo, "--check", f"echo run >> {shlex.quote(str(counter))}")
    assert (code, record["status"]) == (0, "complete")
    assert counter.read_text().count("run") == 1
