"""Host facts of the pinned Codex CLI that autopilot-codex relies on.

Each test runs the real ``codex exec`` (offline, scripted model) with a probe hook that
records its payload and environment and answers from a script. When one of these fails after
a Codex upgrade, the Codex host code must change with it: do not just update the test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.hosts.codex import render
from autopilot_codex.hosts.codex.trust import set_trust, trust_entries

from .codex_cli import CodexRun
from .codex_fixtures import CodexRunner
from .fake_codex_model import Call, FakeCodexModel, Patch, Rule, Shell, message_texts

pytestmark = pytest.mark.e2e

PROBE = Path(__file__).with_name("codex_probe_hook.py")
BYPASS = ("--dangerously-bypass-hook-trust",)
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"
COMMON = {"session_id", "transcript_path", "cwd", "hook_event_name", "model", "permission_mode"}


class Probe:
    """The probe hook installed in ``$CODEX_HOME/hooks.json`` for some events."""

    def __init__(self, codex_home: Path, folder: Path) -> None:
        self.codex_home = codex_home
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.hooks_file = codex_home / "hooks.json"

    def install(self, events: dict[str, str | None], **answers: Any) -> dict[str, Any]:
        """Hook ``events`` (event → matcher or None); ``answers`` as codex_probe_hook reads."""
        hooks: dict[str, list[dict[str, Any]]] = {}
        for event, matcher in events.items():
            handler = {"type": "command", "command": self.command(event), "timeout": 30}
            group: dict[str, Any] = {"hooks": [handler]}
            if matcher is not None:
                group["matcher"] = matcher
            hooks[event] = [group]
        document = {"hooks": hooks}
        self.hooks_file.write_text(json.dumps(document, indent=2))
        (self.folder / "answers.json").write_text(json.dumps(answers))
        return document

    def command(self, event: str) -> str:
        return f"{sys.executable} {PROBE} {event} {self.folder}"

    def calls(self, event: str | None = None) -> list[dict[str, Any]]:
        path = self.folder / "calls.jsonl"
        if not path.exists():
            return []
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        return [r for r in rows if event is None or r["event"] == event]

    def payloads(self, event: str) -> list[dict[str, Any]]:
        return [c["payload"] for c in self.calls(event)]


@pytest.fixture
def probe(codex_home: Path, tmp_path: Path) -> Probe:
    return Probe(codex_home, tmp_path / "probe")


def block(reason: str, **extra: Any) -> dict[str, Any]:
    return {"stdout": {"decision": "block", "reason": reason, **extra}}


def assert_ok(run: CodexRun) -> None:
    assert run.ok, run.describe()


# -- payloads, tool names, the session id --------------------------------------------------------


def test_tool_names_inputs_and_session_id(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel, git_repo: Path
) -> None:
    probe.install(dict.fromkeys(("SessionStart", "PreToolUse", "PostToolUse", "Stop")))
    fake_codex.script = [
        [Patch(PATCH, call_id="call_patch_1")],
        [Shell("cat hello.txt", call_id="call_sh_2")],
        [Shell("printenv CODEX_THREAD_ID CODEX_SESSION_ID", call_id="call_env_3")],
        "final answer",
    ]
    run = codex("make hello.txt", extra_args=BYPASS)
    assert_ok(run)
    assert (git_repo / "hello.txt").read_text() == "hi\n"

    pre = probe.payloads("PreToolUse")
    assert [(p["tool_name"], p["tool_input"]) for p in pre] == [
        ("apply_patch", {"command": PATCH}),
        ("Bash", {"command": "cat hello.txt"}),
        ("Bash", {"command": "printenv CODEX_THREAD_ID CODEX_SESSION_ID"}),
    ]
    assert [p["tool_use_id"] for p in pre] == ["call_patch_1", "call_sh_2", "call_env_3"]
    assert set(pre[0]) == COMMON | {"turn_id", "tool_name", "tool_input", "tool_use_id"}
    post = probe.payloads("PostToolUse")
    assert [p["tool_name"] for p in post] == ["apply_patch", "Bash", "Bash"]
    # tool_response is a plain string (Claude sends an object).
    assert isinstance(post[0]["tool_response"], str)
    assert "A hello.txt" in post[0]["tool_response"]
    assert post[1]["tool_response"] == "hi\n"
    assert set(post[0]) == COMMON | {
        "turn_id",
        "tool_name",
        "tool_input",
        "tool_response",
        "tool_use_id",
    }
    (stop,) = probe.payloads("Stop")
    assert set(stop) == COMMON | {"turn_id", "stop_hook_active", "last_assistant_message"}
    assert (stop["stop_hook_active"], stop["last_assistant_message"]) == (False, "final answer")
    (start,) = probe.payloads("SessionStart")
    assert set(start) == COMMON | {"source"}
    assert start["source"] == "startup"
    assert start["permission_mode"] == "bypassPermissions"

    # One id names the session everywhere: the hook payloads, the --json thread, and (the
    # analogue of CLAUDE_CODE_SESSION_ID) CODEX_THREAD_ID and CODEX_SESSION_ID in the
    # environment of the model's shell commands -- so `autopilot-codex plan` run by the agent
    # can claim the loop for its own session.
    session = start["session_id"]
    assert session == run.thread_id
    assert {p["session_id"] for p in pre + post + [stop]} == {session}
    env_output = fake_codex.model_requests[3].outputs_for("call_env_3")[0]
    assert env_output.rstrip().endswith(f"Output:\n{session}\n{session}"), env_output
    # Hooks do not: they must take the session from the payload.
    assert {c["env"]["CODEX_THREAD_ID"] for c in probe.calls()} == {None}
    assert {c["env"]["CODEX_SESSION_ID"] for c in probe.calls()} == {None}
    assert {c["env"]["CODEX_HOME"] for c in probe.calls()} == {str(probe.codex_home)}


# -- what the answers do -----------------------------------------------------------------------


def test_stop_block_continues_the_same_turn_with_the_reason(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel
) -> None:
    reason = "REASON #1: the work is not finished, run the checks and report again."
    probe.install({"Stop": None}, Stop=[block(reason)])
    fake_codex.script = ["first final answer"]
    fake_codex.rules = [Rule("REASON #1", "second final answer after stop hook")]
    run = codex("do it", extra_args=BYPASS)
    assert_ok(run)
    assert [r.answered for r in fake_codex.model_requests] == ["script:0", "rule:REASON #1"]
    last_item = fake_codex.model_requests[1].input[-1]
    assert (last_item["type"], last_item["role"]) == ("message", "user")
    assert reason in last_item["content"][0]["text"]
    assert "<hook_prompt" in last_item["content"][0]["text"]
    first, second = probe.payloads("Stop")
    assert (first["stop_hook_active"], second["stop_hook_active"]) == (False, True)
    assert first["turn_id"] == second["turn_id"]
    assert run.last_message == "second final answer after stop hook"


def test_an_answer_with_an_extra_field_fails_open(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel
) -> None:
    # Claude accepts hookSpecificOutput on Stop; Codex's closed schema makes it a failure.
    extra = {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "x"}}
    probe.install({"Stop": None}, Stop=[block("EXTRA-FIELD-REASON", **extra)])
    fake_codex.script = ["the only answer"]
    run = codex("do it", extra_args=BYPASS)
    assert_ok(run)
    assert len(fake_codex.model_requests) == 1
    assert "EXTRA-FIELD-REASON" not in "".join(r.raw for r in fake_codex.requests)
    assert len(probe.calls("Stop")) == 1
    assert run.last_message == "the only answer"


def test_post_tool_use_block_replaces_the_tool_output(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel, git_repo: Path
) -> None:
    reason = "REVIEW-FINDING: hello.txt needs a trailing period."
    context = "REVIEW-CONTEXT: the reviewer looked at hello.txt"
    specific = {"hookEventName": "PostToolUse", "additionalContext": context}
    probe.install({"PostToolUse": None}, PostToolUse=[block(reason, hookSpecificOutput=specific)])
    fake_codex.script = [[Patch(PATCH, call_id="call_patch_1")], "ok"]
    run = codex("make hello.txt", extra_args=BYPASS)
    assert_ok(run)
    # The patch is not undone; the model sees the reason instead of the tool's output.
    assert (git_repo / "hello.txt").exists()
    follow_up = fake_codex.model_requests[1]
    assert follow_up.outputs_for("call_patch_1") == [reason]
    assert context in message_texts(follow_up, "developer")


def test_pre_tool_use_deny_keeps_the_command_from_running(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel, git_repo: Path
) -> None:
    reason = "RAILS: touching ran.txt is not allowed"
    deny = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }
    probe.install({"PreToolUse": None}, PreToolUse=[{"stdout": {"hookSpecificOutput": deny}}])
    fake_codex.script = [[Shell("touch ran.txt", call_id="call_sh_1")], "ok"]
    run = codex("touch it", extra_args=BYPASS)
    assert_ok(run)
    assert not (git_repo / "ran.txt").exists()
    (output,) = fake_codex.model_requests[1].outputs_for("call_sh_1")
    assert reason in output


def test_session_start_context_becomes_a_developer_message(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel
) -> None:
    context = "SESSION-CONTEXT: an autopilot loop is running"
    specific = {"hookEventName": "SessionStart", "additionalContext": context}
    probe.install(
        {"SessionStart": None}, SessionStart=[{"stdout": {"hookSpecificOutput": specific}}]
    )
    fake_codex.script = ["ok"]
    assert_ok(codex("hi", extra_args=BYPASS))
    assert context in message_texts(fake_codex.model_requests[0], "developer")


def test_there_is_no_block_cap(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel
) -> None:
    blocks = [block(f"KEEP-GOING #{n}") for n in range(12)]
    probe.install({"Stop": None}, Stop=blocks)
    run = codex("do it", extra_args=BYPASS)
    assert_ok(run)
    # Every block was obeyed: 12 continuations, then the 13th Stop let it end.
    assert len(probe.calls("Stop")) == 13
    assert len(fake_codex.model_requests) == 13
    assert "KEEP-GOING #11" in fake_codex.raw(-1)


# -- the trust gate ----------------------------------------------------------------------------


def test_untrusted_hooks_are_skipped_silently(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel
) -> None:
    probe.install({"PreToolUse": None, "Stop": None}, Stop=[block("SEEN-ONLY-WITH-BYPASS")])
    fake_codex.script = [[Shell("true")], "done"]
    run = codex("do it")
    assert_ok(run)
    assert probe.calls() == []
    # Not a word about it: no error item, nothing on stderr.
    assert run.items("error") == []
    assert "hook" not in run.stderr.lower()
    assert len(fake_codex.model_requests) == 2
    # The same hooks, with the per-run bypass: they run.
    fake_codex.script += [[Shell("true")], "done"]
    bypassed = codex("do it", extra_args=BYPASS)
    assert_ok(bypassed)
    assert [c["event"] for c in probe.calls()] == ["PreToolUse", "Stop", "Stop"]
    assert "SEEN-ONLY-WITH-BYPASS" in fake_codex.raw(-1)


def test_persisted_trust_runs_the_hooks(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel, codex_home: Path
) -> None:
    events: dict[str, str | None] = {
        "SessionStart": "startup|resume",
        "PreToolUse": None,
        "PostToolUse": "apply_patch",
        "Stop": None,
    }
    document = probe.install(events)
    entries = trust_entries(str(probe.hooks_file), document)
    assert sorted(entries) == sorted(
        f"{probe.hooks_file}:{label}:0:0"
        for label in ("session_start", "pre_tool_use", "post_tool_use", "stop")
    )
    # A stale hash (here: of a different timeout) leaves that one hook untrusted.
    stale = dict(document["hooks"]["PreToolUse"][0]["hooks"][0], timeout=31)
    entries[f"{probe.hooks_file}:pre_tool_use:0:0"] = trust_entries(
        str(probe.hooks_file), {"hooks": {"PreToolUse": [{"hooks": [stale]}]}}
    ).popitem()[1]
    config = codex_home / "config.toml"
    config.write_text(set_trust(config.read_text(), entries))
    fake_codex.script = [[Patch(PATCH)], [Shell("true")], "done"]

    run = codex("make hello.txt")

    assert_ok(run)
    assert [c["event"] for c in probe.calls()] == ["SessionStart", "PostToolUse", "Stop"]
    # The matcher "apply_patch" let the patch through and not the shell command.
    assert [p["tool_name"] for p in probe.payloads("PostToolUse")] == ["apply_patch"]


def test_trust_keys_name_the_resolved_hooks_file(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel, codex_home: Path, tmp_path: Path
) -> None:
    link = tmp_path / "codex-home-link"
    link.symlink_to(codex_home)
    document = probe.install({"PreToolUse": None, "Stop": None})
    via_link = trust_entries(str(link / "hooks.json"), document)
    resolved = trust_entries(str(probe.hooks_file), document)
    entries = {
        f"{link}/hooks.json:stop:0:0": via_link[f"{link}/hooks.json:stop:0:0"],
        f"{probe.hooks_file}:pre_tool_use:0:0": resolved[f"{probe.hooks_file}:pre_tool_use:0:0"],
    }
    config = codex_home / "config.toml"
    config.write_text(set_trust(config.read_text(), entries))
    fake_codex.script = [[Shell("true")], "done"]

    run = codex("do it", codex_home=link)

    assert_ok(run)
    # Only the hook trusted under the resolved path ran: Codex resolves CODEX_HOME.
    assert [c["event"] for c in probe.calls()] == ["PreToolUse"]


# -- our own dialect -----------------------------------------------------------------------------


def test_the_answers_hosts_codex_renders_are_obeyed(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel, git_repo: Path
) -> None:
    answers = {
        "SessionStart": [{"stdout": render("SessionStart", "", "", "CTX-START", "MSG-START")}],
        "PreToolUse": [{}, {"stdout": render("PreToolUse", "", "RAILS-DENY", "", "MSG-DENY")}],
        "PostToolUse": [
            {"stdout": render("PostToolUse", "REVIEW-REASON", "", "REVIEW-CTX", "MSG-REVIEW")}
        ],
        "Stop": [{"stdout": render("Stop", "VERDICT-REASON", "", "", "MSG-VERDICT")}],
    }
    probe.install(dict.fromkeys(answers), **answers)
    fake_codex.script = [
        [Patch(PATCH, call_id="call_patch_1")],
        [Shell("touch denied.txt", call_id="call_deny_2")],
        "first final answer",
    ]
    fake_codex.rules = [Rule("VERDICT-REASON", "second final answer")]

    run = codex("make hello.txt", extra_args=BYPASS)

    assert_ok(run)
    requests = fake_codex.model_requests
    assert "CTX-START" in message_texts(requests[0], "developer")
    assert requests[1].outputs_for("call_patch_1") == ["REVIEW-REASON"]
    assert "REVIEW-CTX" in message_texts(requests[1], "developer")
    assert not (git_repo / "denied.txt").exists()
    assert "RAILS-DENY" in requests[2].outputs_for("call_deny_2")[0]
    assert [r.answered for r in requests][-1] == "rule:VERDICT-REASON"
    assert [p["stop_hook_active"] for p in probe.payloads("Stop")] == [False, True]
    assert run.last_message == "second final answer"


# -- the question tool ---------------------------------------------------------------------------

QUESTION = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the cache use?",
            "options": [
                {"label": "sqlite", "description": "a file next to the app"},
                {"label": "redis", "description": "a server"},
            ],
        }
    ]
}


def test_request_user_input_reaches_pre_tool_use_and_a_deny_reason_answers_it(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel
) -> None:
    """`codex exec` offers `request_user_input`; a call to it fires PreToolUse with the
    questions as `tool_input`, and a deny reason is what the model reads as the tool's
    output, in the same turn. No PostToolUse fires for it."""
    deny = render("PreToolUse", "", "HOOK-ANSWER", "", "")
    probe.install({"PreToolUse": None, "PostToolUse": None}, PreToolUse=[{"stdout": deny}])
    fake_codex.script = [[Call("request_user_input", QUESTION, call_id="call_ask_1")], "ok"]

    run = codex("pick a database", extra_args=BYPASS)

    assert_ok(run)
    first, follow_up = fake_codex.model_requests[:2]
    assert "request_user_input" in first.tool_names()
    (pre,) = probe.payloads("PreToolUse")
    assert (pre["tool_name"], pre["tool_input"]) == ("request_user_input", QUESTION)
    assert pre["tool_use_id"] == "call_ask_1"
    (output,) = follow_up.outputs_for("call_ask_1")
    assert output == "Tool call blocked by PreToolUse hook: HOOK-ANSWER. Tool: request_user_input"
    assert probe.calls("PostToolUse") == []


def test_request_user_input_is_refused_in_exec_without_a_hook_answer(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel
) -> None:
    """With the hook allowing it, `codex exec` (Default collaboration mode) refuses the tool
    itself: nobody is asked and the model goes on."""
    probe.install({"PreToolUse": None})
    fake_codex.script = [[Call("request_user_input", QUESTION, call_id="call_ask_1")], "ok"]

    run = codex("pick a database", extra_args=BYPASS)

    assert_ok(run)
    (output,) = fake_codex.model_requests[1].outputs_for("call_ask_1")
    assert output == "request_user_input is unavailable in Default mode"


def test_session_end_runs_at_the_end_of_exec_only_with_the_trust_bypass(
    codex: CodexRunner, probe: Probe, fake_codex: FakeCodexModel, codex_home: Path
) -> None:
    """Codex's SessionEnd hook, trusted like every other one, does not run at the end of
    `codex exec`; with the per-run bypass it does, after the Stop."""
    document = probe.install({"SessionEnd": None, "Stop": None})
    config = codex_home / "config.toml"
    config.write_text(set_trust(config.read_text(), trust_entries(str(probe.hooks_file), document)))
    fake_codex.script = ["done", "done"]

    assert_ok(codex("say done"))
    assert [c["event"] for c in probe.calls()] == ["Stop"]
    assert_ok(codex("say done", extra_args=BYPASS))
    assert [c["event"] for c in probe.calls()] == ["Stop", "Stop", "SessionEnd"]
