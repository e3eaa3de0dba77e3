"""Adding a host is one package and one registry line: a fake third host, with its own payload
dialect, answer dialect and headless stream, goes through a ralph loop, a denied command and a
round with nothing else in the bridge changed.

Type-checked by `mypy --strict` (pyproject's `files`): the registry's loader checks the fake
against `Host`.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import hosts
from autopilot_codex.__main__ import run as launcher
from autopilot_codex.cli import main as cli_main
from autopilot_codex.commands.run import main as run_main
from autopilot_codex.paths import project_dir
from tests.conftest import ROOT, plan_body
from tests.fakes import third_host
from tests.fakes.openai_server import FakeOpenAI

THIRD_CLI = ROOT / "tests" / "fakes" / "third_host" / "cli.py"


def _third() -> hosts.Host:
    return third_host.HOST


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one registry line, added the way a test adds a member."""
    monkeypatch.setattr(hosts, "HOSTS", hosts.HOSTS.with_member("third", _third))


def hook(
    event: str,
    data: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """The real hook path in this process, as the third host would call it."""
    raw = json.dumps(data).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    monkeypatch.setattr(sys, "argv", ["autopilot-codex", "hook", event, "--host", "third"])
    capsys.readouterr()
    assert launcher() == 0
    return capsys.readouterr().out


def answer(text: str) -> dict[str, Any]:
    return json.loads(text) if text.strip() else {}


def start_ralph(repo: Path, capsys: pytest.CaptureFixture[str]) -> str:
    argv = ["-C", str(repo), "ralph", "--host", "third", "--session-id", "t-1"]
    argv += ["--completion-promise", "ALL GREEN", "Make", "the", "tests", "pass."]
    assert cli_main(argv) == 0
    return capsys.readouterr().out


def test_a_ralph_loop_in_the_third_hosts_dialect(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started = start_ralph(repo, capsys)
    # The host renders the names of our commands in its own messages.
    assert (
        "Cancel with autopilot-codex cancel (in a terminal) or :autopilot cancel (in Third CLI)."
        in started
    )
    base = {"session_id": "t-1", "cwd": str(repo)}
    ran = {**base, "tool": "run_shell", "args": {"cmd": "pytest"}}
    assert hook("PostToolUse", ran, capsys, monkeypatch) == ""
    going = answer(hook("Stop", {**base, "final_text": "Still working."}, capsys, monkeypatch))
    assert going["verdict"] == "again" and "Make the tests pass." in going["why"]
    hook("PostToolUse", ran, capsys, monkeypatch)
    done = {**base, "final_text": "All tests pass.\n<promise>ALL GREEN</promise>", "again": True}
    assert answer(hook("Stop", done, capsys, monkeypatch)).get("verdict") is None
    assert cli_main(["-C", str(repo), "status"]) == 0
    assert "Session t-1 in Third CLI" in capsys.readouterr().out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert (state["status"], state["host"]) == ("done", "third")
    last = json.loads((project_dir(repo) / "last.json").read_text())
    assert "ALL GREEN" in json.dumps(last)


def test_commands_are_denied_in_the_third_hosts_dialect(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    start_ralph(repo, capsys)
    base = {"session_id": "t-1", "cwd": str(repo)}

    def pre(tool: str, **args: str) -> dict[str, Any]:
        call = {**base, "tool": tool, "args": args}
        return answer(hook("PreToolUse", call, capsys, monkeypatch))

    push = pre("run_shell", cmd="git status && git push --force origin main")
    assert push["verdict"] == "refuse" and "[force-push]" in push["why"]
    assert "[secrets]" in pre("write_file", target=str(repo / ".env"))["why"]
    # Its own settings file is protected, and may still be read.
    assert "[host-settings]" in pre("write_file", target=str(repo / ".third/hooks.json"))["why"]
    assert pre("read_file", target=str(repo / ".third/hooks.json")) == {}
    # The other hosts' settings stay protected from it too.
    assert "[host-settings]" in pre("write_file", target=str(repo / ".claude/settings.json"))["why"]
    # A Claude tool name means nothing in this dialect.
    assert pre("Bash", command="git push --force") == {}
    assert pre("run_shell", cmd="git status") == {}


def test_a_round_with_the_third_hosts_headless_runner(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "script.json"
    ready = {"write": {"hello.txt": "hi\n"}, "commit": "add hello", "say": "Done.\n::potter(ready)"}
    verified = {"say": "Checked every requirement.\n::potter(exit)", "cost": 0.5}
    script.write_text(json.dumps([ready, verified]))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(THIRD_CLI))}"
    monkeypatch.setenv("AUTOPILOT_CODEX_THIRD_CMD", command)
    monkeypatch.setenv("FAKE_HOST_SCRIPT", str(script))
    monkeypatch.setenv("THIRD_API_KEY", "its own sign-in")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "another host's")
    out = io.StringIO()
    argv = ["add hello", "--implementer", "third", "--cwd", str(repo), "--json"]
    assert run_main(argv, stdout=out) == 0
    record = json.loads(out.getvalue())
    assert (record["status"], record["rounds_used"]) == ("complete", 2)
    assert record["message"] == "Checked every requirement."
    assert record["cost_usd"] == pytest.approx(0.52)
    calls = [json.loads(x) for x in Path(f"{script}.calls.jsonl").read_text().splitlines()]
    assert [c["host"] for c in calls] == ["third", "third"]
    # The round keeps the credentials its host says it needs, and no other host's.
    assert "THIRD_API_KEY" in calls[0]["names"] and "ANTHROPIC_API_KEY" not in calls[0]["names"]
    assert (repo / "hello.txt").read_text() == "hi\n"


def test_the_third_host_is_offered_and_checked_everywhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from autopilot_codex.commands import install, run
    from autopilot_codex.commands.doctor import host_reports
    from autopilot_codex.rounds.runner import implementers

    assert implementers() == ("claude", "codex", "third")
    assert "third" in run.parser().format_usage() or "third" in run.parser().format_help()
    assert install.installable() == ("codex",)  # it has no installer
    assert [r.host for r in host_reports(None, {"PATH": ""})][-1] == "Third CLI"


def test_a_plan_made_from_its_shell_belongs_to_it(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host whose session variable the command sees started the loop: `State.host`."""
    manager.enqueue(plan_body(), schema="Plan")
    monkeypatch.setenv("THIRD_SESSION", "t-9")
    for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID"):
        monkeypatch.delenv(var, raising=False)
    assert cli_main(["-C", str(repo), "plan", "build", "it"]) == 0
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert (state["host"], state["session_id"]) == ("third", "t-9")


def test_an_unclaimed_loop_claimed_by_its_session_becomes_its_loop(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "THIRD_SESSION"):
        monkeypatch.delenv(var, raising=False)
    assert cli_main(["-C", str(repo), "ralph", "Make", "the", "tests", "pass."]) == 0
    capsys.readouterr()
    # Only a prompt the user typed claims a loop (never a tool or Stop hook).
    prompt = {"session_id": "t-2", "cwd": str(repo), "prompt": "Go on."}
    hook("UserPromptSubmit", prompt, capsys, monkeypatch)
    stop = {"session_id": "t-2", "cwd": str(repo), "final_text": "Still working."}
    assert answer(hook("Stop", stop, capsys, monkeypatch))["verdict"] == "again"
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert (state["host"], state["session_id"]) == ("third", "t-2")
