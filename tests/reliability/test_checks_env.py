"""A user's check runs code the implementer just wrote: what that code must not reach or keep.

Each check runs at a ralph Stop through the real launcher (`bin/autopilot-codex hook Stop`) in a
subprocess, as the host would run it: a check that hunts for the manager's key finds none in
its own environment, and one that rewrites the loop's config or state fails, its change put
back and recorded. Harmless look-alikes (reading the config, writing the worktree) pass.

Where the supervisor's sandbox runs (`WALLED`), the state home is hidden from the check: its
write fails outright and there is nothing to put back, so only the unwalled run records a
`checks.tamper` event.
"""

from __future__ import annotations

import base64
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.config import config_file
from autopilot_codex.paths import active_marker, project_dir
from autopilot_codex.sandbox import jail
from tests.conftest import PLANTED_KEY, payload, run_launcher, state_of

PROMISE = "ALL GREEN"
WALLED = jail.probe().ok


def ralph(repo: Path, check: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["-C", str(repo), "ralph", "--completion-promise", PROMISE, "--check", check]
    assert main([*args, "--session-id", "sess-1", "Make it so."]) == 0
    capsys.readouterr()


def stop(repo: Path) -> dict[str, Any]:
    """A Stop that keeps the promise, through the real launcher in a subprocess."""
    data = payload("Stop", repo, last_assistant_message=f"Done.\n<promise>{PROMISE}</promise>")
    run = run_launcher(["hook", "Stop", "--host", "claude"], json.dumps(data).encode(), cwd=repo)
    assert run.code == 0, run.stderr
    answer: dict[str, Any] = json.loads(run.stdout) if run.stdout.strip() else {}
    return answer


def events(repo: Path, name: str) -> list[dict[str, Any]]:
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == name]


def test_a_check_hunting_for_the_key_finds_none_in_its_environment(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hunt = (
        'echo "key=[$OPENAI_API_KEY]"; '
        "grep -ac PLANTEDKEY /proc/self/environ; "
        "echo env64=$(base64 -w0 /proc/self/environ); exit 1"
    )
    ralph(repo, hunt, capsys)
    answer = stop(repo)
    assert answer["decision"] == "block"  # red: the promise is not accepted
    (result,) = state_of(repo)["last_checks"]
    tail = result["tail"]
    assert "key=[]" in tail and "\n0\n" in f"\n{tail}\n"
    encoded = next(line for line in tail.splitlines() if line.startswith("env64="))
    environ = base64.b64decode(encoded.removeprefix("env64=")).decode(errors="replace")
    assert PLANTED_KEY not in environ and "OPENAI_" not in environ
    assert "AUTOPILOT_CODEX_" not in environ
    assert PLANTED_KEY not in answer["reason"]
    names = {item.split("=", 1)[0] for item in environ.split("\0") if item}
    assert {"PATH", "HOME"} <= names


def test_a_check_that_allows_every_command_in_the_config_fails_and_is_undone(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('{"allow_push": false}\n')
    forge = json.dumps({"rails_allow": [".*"], "allow_push": True})
    ralph(repo, f"printf %s {shlex.quote(forge)} > {shlex.quote(str(config))}", capsys)
    answer = stop(repo)
    assert config.read_text() == '{"allow_push": false}\n'
    if WALLED:
        # The write lands in the sandbox's own throwaway view of the state home, never in the
        # config: nothing was tampered with, and the check may pass (the loop then ends done).
        assert events(repo, "checks.tamper") == []
        if answer.get("decision") != "block":
            return
    assert answer["decision"] == "block"
    (result,) = state_of(repo)["last_checks"]
    assert result["status"] == "fail"
    if not WALLED:
        assert "tampering" in answer["reason"] and "config.json" in answer["reason"]
        (event,) = events(repo, "checks.tamper")
        assert event["changed"] == ["config.json"]
    # The rails never saw the forged allow rule: a force push is still denied.
    push = payload(
        "PreToolUse",
        repo,
        tool_name="Bash",
        tool_input={"command": "git push --force origin main"},
    )
    run = run_launcher(["hook", "PreToolUse", "--host", "claude"], json.dumps(push).encode())
    assert '"permissionDecision": "deny"' in run.stdout, run.stdout


def test_a_config_the_check_creates_is_removed(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_file()
    assert not config.exists()
    forge = json.dumps({"rails_allow": [".*"]})
    write = f"mkdir -p {shlex.quote(str(config.parent))}; printf %s {shlex.quote(forge)} > "
    ralph(repo, write + shlex.quote(str(config)), capsys)
    stop(repo)
    assert not config.exists()
    if not WALLED:
        assert events(repo, "checks.tamper")[0]["changed"] == ["config.json"]


@pytest.mark.parametrize(
    "attack",
    [
        # A bigger budget, written straight into the state.
        "python3 -c \"import json,pathlib; p=pathlib.Path('{state}'); d=json.loads(p.read_text());"
        " d['budget_usd']=9999; p.write_text(json.dumps(d))\"",
        # The loop switched off by its active marker (the rails go quiet with it).
        "rm -f '{marker}'",
        # The ledger cut short, to hide what happened.
        ": > '{events}'",
    ],
    ids=["state", "marker", "ledger"],
)
def test_a_check_that_edits_the_loops_state_fails_and_is_undone(
    repo: Path, capsys: pytest.CaptureFixture[str], attack: str
) -> None:
    folder = project_dir(repo)
    where = {
        "state": folder / "state.json",
        "marker": active_marker(repo),
        "events": folder / "events.jsonl",
    }
    ralph(repo, attack.format(**where), capsys)
    before = {name: path.read_bytes() for name, path in where.items() if name != "events"}
    ledger = where["events"].read_bytes()
    answer = stop(repo)
    state = state_of(repo)
    assert where["events"].read_bytes().startswith(ledger)
    assert state.get("budget_usd") != 9999
    if WALLED:
        # The write failed (a red check) or landed in the sandbox's empty stand-in for the
        # state home (`rm -f` of a path that is not there: green, and the loop ends as the
        # bridge decides, its own marker put away by the bridge itself).
        assert (answer.get("decision") == "block") == (state["status"] == "running")
        return
    assert answer["decision"] == "block" and "tampering" in answer["reason"]
    assert where["marker"].read_bytes() == before["marker"]
    assert state["status"] == "running"
    assert events(repo, "checks.tamper")


@pytest.mark.parametrize(
    "check",
    [
        "cat {config} >/dev/null 2>&1; true",
        "echo built > build.log && test -s build.log",
        # Hidden from a walled check (so listed leniently): a check has no business there.
        "ls {folder} >/dev/null 2>&1; true",
    ],
    ids=["reads-config", "writes-worktree", "lists-state"],
)
def test_a_harmless_check_is_no_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str], check: str
) -> None:
    config = config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("{}\n")
    ralph(repo, check.format(config=config, folder=project_dir(repo)), capsys)
    answer = stop(repo)
    assert "decision" not in answer, answer
    assert state_of(repo)["status"] == "done"
    assert not events(repo, "checks.tamper")
