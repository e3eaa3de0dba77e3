"""Text the implementer writes never makes the supervisor's pattern matching run for hours.

A pattern that backtracks (a lazy `.*?` before a closing that never comes, a backreference
retried at every length, a lazy group before `\\s*$`) costs time growing with the square or
the cube of the text's length. The implementer chooses that text: its last message (ralph's
completion promise, a round's markers), a patch it hands a tool, a Makefile it leaves behind,
the files whose diff is searched for credentials before the manager sees it.
Each test plays one such text, of a bounded size that the old reading took far longer than the
test's generous timeout to read, through the real hook or command, and checks the outcome.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import Hook, HookRun, cli, git, payload, plan_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_rounds_driver import READY, Script, drive, rounds_of
from tests.reliability.conftest import answer_of, blocks, start_loop

# A hang fails the test here; the linear readings answer in well under a second.
GENEROUS_S = 120

# ralph: 400k unclosed tags, each of which the lazy `<promise>(.*?)</promise>` read to the end;
# 400k closed tags on one line, before each of which the line was read again from its start.
UNCLOSED_TAGS = "<promise>" * 400_000
CLOSED_TAGS = "Tried <promise>a</promise>" * 400_000


@pytest.mark.timeout(GENEROUS_S)
def test_ralph_a_message_of_many_promise_tags_is_read_in_one_pass(
    repo: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["-C", str(repo), "ralph", "--completion-promise", "ALL GREEN", "--session-id", "s-1"]
    code, out = cli(capsys, *argv, "Make", "the", "tests", "pass.")
    assert code == 0, out
    message = UNCLOSED_TAGS + "\n<promise>ALL GREEN"
    answer = answer_of(hook("Stop", payload("Stop", repo, "s-1", last_assistant_message=message)))
    assert blocks(answer)  # no promise kept: the prompt goes back
    # The promise on its own line after a line of closed ones still ends the loop.
    message = CLOSED_TAGS + "\n<promise>ALL GREEN</promise>"
    answer = answer_of(hook("Stop", payload("Stop", repo, "s-1", last_assistant_message=message)))
    assert not blocks(answer)
    last = json.loads((project_dir(repo) / "last.json").read_text())
    assert last["why"] == "promise"


@pytest.mark.timeout(GENEROUS_S)
def test_rounds_a_message_of_one_long_backtick_run_is_read_in_one_pass(
    repo: Path, script: Script
) -> None:
    # `(`+).*?\1` tried every length at every start of a 20k run: the cube of its length.
    flood = "Said " + "`" * 20_000 + "a"
    script([{**READY, "say": flood + "\n::potter(ready)"}, {"say": flood + "\n::potter(exit)"}])
    code, record = drive(repo)
    assert (code, record["rounds_used"]) == (0, 2)
    assert [r.markers for r in rounds_of(repo)] == [["ready"], ["exit"]]


def codex_hook(
    event: str,
    data: dict[str, object],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> HookRun:
    """`autopilot-codex hook EVENT --host codex`, in this process."""
    from autopilot_codex.__main__ import run

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(data).encode())))
    monkeypatch.setattr(sys, "argv", ["autopilot-codex", "hook", event, "--host", "codex"])
    capsys.readouterr()
    code = run()
    out = capsys.readouterr()
    return HookRun(code, out.out, out.err)


@pytest.mark.timeout(GENEROUS_S)
def test_codex_a_patch_line_of_a_million_spaces_is_read_in_one_pass(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start_loop(repo, manager, capsys)
    # `: (.+?)\s*$` grew its lazy group one space at a time and ran `\s*` over the rest.
    patch = (
        "*** Begin Patch\n*** Add File: notes" + " " * 1_000_000 + "x\n+hi\n"
        "*** Add File: .mcp.json\n+{}\n*** End Patch\n"
    )
    data = payload("PreToolUse", repo, tool_name="apply_patch", tool_input={"command": patch})
    answer = answer_of(codex_hook("PreToolUse", data, capsys, monkeypatch))
    assert blocks(answer), answer  # the settings file after the flood is still seen


@pytest.mark.timeout(GENEROUS_S)
def test_plan_a_makefile_of_one_long_line_of_targets_is_read_in_one_pass(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    # The targets before `test` were tried at every count, each with a scan of the rest.
    (repo / "Makefile").write_text("test " * 50_000 + "\nunit test:\n\tpytest\n")
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "s-1", "write", "it")
    assert code == 0, out
    assert "looks tested by `make test`" in out


@pytest.mark.timeout(GENEROUS_S)
def test_autopilot_a_diff_of_unclosed_key_headers_is_redacted_in_one_pass(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    start_loop(repo, manager, capsys, "--review", "off")
    (repo / "notes.txt").write_text("notes\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "notes")
    # A private key the review must never send, then 110k key headers that nothing closes:
    # the lazy `-----BEGIN ... KEY-----[\s\S]*?-----END ...` read the whole diff from each.
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretbody\n-----END RSA PRIVATE KEY-----\n"
    (repo / "notes.txt").write_text(key + "-----BEGIN PRIVATE KEY-----\n" * 110_000)
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    answer = answer_of(hook("Stop", payload("Stop", repo, last_assistant_message="T1 done.")))
    assert blocks(answer)
    prompt = manager.requests_for(schema="Verdict")[-1].prompt_text
    assert "-----BEGIN PRIVATE KEY-----" in prompt and "MIIEsecretbody" not in prompt
