"""The Codex CLI: its hook dialect and answers (golden: exactly the fields each event's closed
schema has), its hooks files, its command names, and its headless stream (`codex exec --json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.hookio import Answer
from autopilot_codex.hosts.codex import HOST, render
from autopilot_codex.stream import StreamState

CODEX = HOST


def test_tool_names() -> None:
    assert CODEX.edit_tools == frozenset({"apply_patch"})
    assert "Bash" in CODEX.shell_tools and "exec_command" in CODEX.shell_tools
    assert CODEX.read_tools == frozenset()


def test_codex_paths_come_from_the_patch_text() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** Update File: src/a.py\n"
        "*** Move to: src/b.py\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\n"
    )
    assert CODEX.touched_paths("apply_patch", {"command": patch}) == [
        "hello.txt",
        "src/a.py",
        "src/b.py",
        "old.txt",
    ]
    assert CODEX.touched_paths("Bash", {"command": "*** Add File: x"}) == []


def test_argv_reads_as_one_shell_line() -> None:
    argv = {"command": ["bash", "-lc", "git status && git push --force"]}
    assert CODEX.shell_command("exec_command", argv) == "bash -lc 'git status && git push --force'"
    assert CODEX.shell_command("apply_patch", argv) is None


def test_its_hooks_files_are_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in (
        ".codex/hooks.json",
        "/r/.codex/config.toml",
        ".codex/autopilot-codex-install.json",
    ):
        assert CODEX.is_settings_file(path), path
    assert not CODEX.is_settings_file(".codex/notes.md")
    # Attack: `$CODEX_HOME` need not be called `.codex`; its hooks file holds the user's hooks.
    home = tmp_path / "elsewhere"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert CODEX.is_settings_file(str(home / "hooks.json"))
    assert CODEX.is_settings_file(str(home / "config.toml"))
    assert not CODEX.is_settings_file(str(home / "sessions" / "hooks.json"))
    assert not CODEX.is_settings_file("hooks.json")


def test_commands_are_terminal_commands() -> None:
    assert CODEX.command("resume") == "autopilot-codex resume"
    assert CODEX.command("cancel") == "autopilot-codex cancel"


def test_it_has_an_installer_and_owns_its_boundary() -> None:
    assert CODEX.installer() is not None
    boundary = CODEX.boundary()
    # Codex brings its own bubblewrap.
    assert boundary is not None and boundary.flag_layer == "overrides" and not boundary.needs_tools


BLOCK = Answer(block="keep going", message="banner")
DENY = Answer(deny="no force push")
CONTEXT = Answer(context="your task", message="banner")

# (event, answer) -> the exact stdout.
GOLDEN = [
    ("Stop", Answer(), ""),
    # Codex rejects unknown fields: a Stop answer carries decision and reason only.
    ("Stop", BLOCK, {"decision": "block", "reason": "keep going", "systemMessage": "banner"}),
    ("Stop", Answer(block="go", context="ignored"), {"decision": "block", "reason": "go"}),
    ("Stop", CONTEXT, {"systemMessage": "banner"}),
    ("PostToolUse", Answer(block="fix it"), {"decision": "block", "reason": "fix it"}),
    (
        "PostToolUse",
        Answer(context="stopped"),
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "stopped"}},
    ),
    (
        "PreToolUse",
        DENY,
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no force push",
            }
        },
    ),
    (
        "SessionStart",
        Answer(context="task T1"),
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "task T1"}},
    ),
    # A block on an event without a block field would make the whole answer invalid.
    ("SessionStart", Answer(block="x"), ""),
]


@pytest.mark.parametrize(("event", "answer", "expected"), GOLDEN)
def test_rendering_is_golden(event: str, answer: Answer, expected: object) -> None:
    text = CODEX.render(event, answer)
    assert (json.loads(text) if text else "") == expected


# -- the render function, field by field -------------------------------------------------------


def golden(
    event: str, block: str = "", deny: str = "", context: str = "", message: str = ""
) -> object:
    text = render(event, block, deny, context, message)
    return json.loads(text) if text else None


@pytest.mark.parametrize(
    "event", ["PreToolUse", "PostToolUse", "Stop", "SessionStart", "PreCompact"]
)
def test_nothing_to_say_is_the_empty_answer(event: str) -> None:
    assert render(event, "", "", "", "") == ""


def test_stop() -> None:
    assert golden("Stop", block="R") == {"decision": "block", "reason": "R"}
    assert golden("Stop", block="R", message="M") == {
        "decision": "block",
        "reason": "R",
        "systemMessage": "M",
    }
    # No hookSpecificOutput on Stop: the context cannot go anywhere.
    assert golden("Stop", block="R", context="C") == {"decision": "block", "reason": "R"}
    assert golden("Stop", message="M") == {"systemMessage": "M"}
    assert golden("Stop", deny="D") is None


def test_post_tool_use() -> None:
    assert golden("PostToolUse", block="R", context="C", message="M") == {
        "decision": "block",
        "reason": "R",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "C"},
        "systemMessage": "M",
    }
    assert golden("PostToolUse", context="C") == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "C"}
    }
    assert golden("PostToolUse", message="M") == {"systemMessage": "M"}


def test_pre_tool_use() -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "D",
        }
    }
    assert golden("PreToolUse", deny="D") == deny
    assert golden("PreToolUse", block="D") == deny  # a block is a deny here
    assert golden("PreToolUse", deny="D", message="M") == {**deny, "systemMessage": "M"}
    assert golden("PreToolUse", context="C") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "C"}
    }


def test_session_start() -> None:
    assert golden("SessionStart", context="C", message="M") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "C"},
        "systemMessage": "M",
    }
    assert golden("SessionStart", block="R") is None


def test_other_events_only_carry_a_message() -> None:
    assert golden("PreCompact", block="R", deny="D", context="C", message="M") == {
        "systemMessage": "M"
    }
    assert golden("UserPromptSubmit", block="R", context="C") == {
        "decision": "block",
        "reason": "R",
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "C"},
    }


# -- the headless stream ---------------------------------------------------------------------


def feed(*events: dict[str, Any] | str) -> StreamState:
    runner = HOST.headless()
    assert runner is not None
    state = StreamState(HOST.name, reader=runner.read)
    for event in events:
        state.feed_line(event if isinstance(event, str) else json.dumps(event))
    return state


def test_codex_stream() -> None:
    s = feed(
        {"type": "thread.started", "thread_id": "th"},
        {"type": "item.started", "item": {"type": "command_execution", "command": "ls"}},
        {"type": "item.completed", "item": {"type": "file_change", "changes": [{"path": "a.py"}]}},
        # The hook-trust warning arrives as an error item: not a failure.
        {"type": "item.completed", "item": {"type": "error", "message": "hooks bypassed"}},
        {
            "type": "item.completed",
            "item": {"type": "agent_message", "text": "Done.\n::potter(ready)"},
        },
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 50, "output_tokens": 20},
        },
    )
    assert (s.last_message, s.last_action, s.tokens, s.finished, s.error) == (
        "Done.\n::potter(ready)",
        "edit: a.py",
        120,
        True,
        "",
    )
    # No model named: the dearest row (gpt-6-astra), 50 x $10 + 50 cached x $1 + 20 x $50.
    assert s.cost_usd == pytest.approx(0.00155)
    assert s.unpriced == "codex's default model"


def test_a_codex_turn_is_priced_for_its_model_cached_input_as_such() -> None:
    runner = HOST.headless()
    assert runner is not None
    state = StreamState(HOST.name, reader=runner.read, model="gpt-5.4")
    usage = {"input_tokens": 10_000, "cached_input_tokens": 4_000, "output_tokens": 1_000}
    for _ in range(2):
        state.feed_line(json.dumps({"type": "turn.completed", "usage": usage}))
    # gpt-5.4: 6,000 x $2.50 + 4,000 cached x $0.25 + 1,000 x $15 per million, twice.
    assert state.cost_usd == pytest.approx(2 * 0.031)
    assert (state.tokens, state.unpriced) == (22_000, "")


@pytest.mark.parametrize(
    ("args", "config", "model"),
    [
        (["-m", "gpt-5.4"], "", "gpt-5.4"),
        (["--model", "gpt-5.4"], 'model = "gpt-5-mini"', "gpt-5.4"),
        (["--model=gpt-5.4", "-c", 'model="gpt-5-mini"'], "", "gpt-5.4"),
        (["-mgpt-5.4"], "", "gpt-5.4"),
        (["-c", 'model="gpt-5-mini"'], 'model = "gpt-5.4"', "gpt-5-mini"),
        (["--config=model=gpt-5-mini"], "", "gpt-5-mini"),
        (["-c", "model_provider=x"], "model = 'gpt-5.4'\n", "gpt-5.4"),
        # A profile that is not in use names nothing.
        ([], '[profiles.x]\nmodel = "gpt-5.4"\n', ""),
        ([], "", ""),
        # The profile in use: its model beats a -c model and the top level, never -m.
        (["-p", "x"], 'model = "gpt-5-mini"\n[profiles.x]\nmodel = "gpt-5.4"\n', "gpt-5.4"),
        (
            ["--profile", "x", "-c", "model=gpt-5-mini"],
            '[profiles.x]\nmodel = "gpt-5.4"\n',
            "gpt-5.4",
        ),
        (["--profile=x"], '[profiles.x]\nmodel = "gpt-5.4"\n', "gpt-5.4"),
        (["-p", "x", "-m", "gpt-5-nano"], '[profiles.x]\nmodel = "gpt-5.4"\n', "gpt-5-nano"),
        ([], 'profile = "x"\nmodel = "gpt-5-mini"\n[profiles.x]\nmodel = "gpt-5.4"\n', "gpt-5.4"),
        (["-c", "profile=x"], 'model = "gpt-5-mini"\n[profiles.x]\nmodel = "gpt-5.4"\n', "gpt-5.4"),
        # An unknown profile, or one without a model, falls back to the top level.
        (["-p", "y"], 'model = "gpt-5-mini"\n[profiles.x]\nmodel = "gpt-5.4"\n', "gpt-5-mini"),
        (["-p", "x"], 'model = "gpt-5-mini"\n[profiles.x]\neffort = "high"\n', "gpt-5-mini"),
        # A file that is not TOML names nothing.
        ([], 'model = "gpt-5.4\n', ""),
    ],
)
def test_the_model_a_round_runs(args: list[str], config: str, model: str, tmp_path: Path) -> None:
    runner = HOST.headless()
    assert runner is not None
    if config:
        (tmp_path / "config.toml").write_text(config)
    # The prompt is the last word: a prompt of "-m x" names no model.
    cmd = runner.command("-m gpt-6-astra", ["codex"], args)
    assert runner.model_of(cmd, {"CODEX_HOME": str(tmp_path)}) == model


def test_codex_failed_turn() -> None:
    s = feed({"type": "turn.failed", "error": {"message": "rate limited"}})
    assert (s.error, s.finished) == ("rate limited", False)


def test_the_command_line_keeps_the_git_directory_read_only() -> None:
    """workspace-write keeps `.git` read-only and nothing adds it back: the driver commits."""
    runner = CODEX.headless()
    assert runner is not None and runner.executable == "codex"
    assert runner.command("do it", ["codex"], None) == [
        "codex",
        "exec",
        "--json",
        "--sandbox",
        "workspace-write",
        "do it",
    ]
    assert "--add-dir" not in runner.command("x", ["codex"], [])
    assert runner.command("do it", ["codex"], ["--full-auto"]) == [
        "codex",
        "exec",
        "--json",
        "--full-auto",
        "do it",
    ]


def test_the_rails_keep_a_renamed_codex_home_s_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: with `CODEX_HOME=/somewhere/else`, the implementer rewrites the hooks file there
    (or its trust in config.toml) to switch the supervisor off."""
    from autopilot_codex.config import Config
    from autopilot_codex.hookio import HookInput
    from tests.rails_calls import check, check_command

    home = tmp_path / "codex-config"
    home.mkdir()
    worktree = tmp_path / "wt"
    worktree.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    line = f"echo '{{}}' > {home / 'hooks.json'}"
    assert "[host-settings]" in (check_command(line, Config(), worktree, None) or "")
    patch = f"*** Begin Patch\n*** Update File: {home / 'config.toml'}\n*** End Patch"
    call = HookInput(event="PreToolUse", tool_name="apply_patch", tool_input={"command": patch})
    assert "[host-settings]" in (check(call, Config(), worktree, CODEX) or "")
    assert check_command(f"cat {home / 'hooks.json'}", Config(), worktree, None) is None
