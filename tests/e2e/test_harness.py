"""Smoke tests of the e2e harness itself, using a throwaway plugin named "probe"."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

PLUGIN_NAME = "probe"

# Appends the hook's stdin (one JSON object) as a line to $PROBE_LOG_DIR/<event>.jsonl.
# A Stop hook also blocks once with $PROBE_STOP_BLOCK_ONCE as the reason, when that is set.
HOOK_SCRIPT = """#!/usr/bin/env bash
set -eu
event="$1"
payload="$(cat)"
printf '%s\\n' "$payload" >> "$PROBE_LOG_DIR/$event.jsonl"
if [ "$event" = Stop ] && [ -n "${PROBE_STOP_BLOCK_ONCE:-}" ] \\
    && [ ! -e "$PROBE_LOG_DIR/stop-blocked" ]; then
  : > "$PROBE_LOG_DIR/stop-blocked"
  printf '{"decision":"block","reason":"%s"}\\n' "$PROBE_STOP_BLOCK_ONCE"
fi
"""

HELLO_COMMAND = """---
description: Say hello (harness probe)
argument-hint: <name>
allowed-tools: Bash(echo *)
---
HELLO-CMD args=[$ARGUMENTS]
BANG: !`echo BANG_$((6*7))`
"""


def make_probe_plugin(root: Path) -> Path:
    """Write the "probe" plugin under ``root`` and return its directory."""
    plugin = root / PLUGIN_NAME
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": PLUGIN_NAME, "version": "0.0.1", "description": "harness probe"})
    )
    (plugin / "bin").mkdir()
    script = plugin / "bin" / "record.sh"
    script.write_text(HOOK_SCRIPT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    hooks = {
        "hooks": {
            event: [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": f'bash "${{CLAUDE_PLUGIN_ROOT}}/bin/record.sh" {event}',
                            "timeout": 30,
                        }
                    ],
                }
            ]
            for event in ("PostToolUse", "Stop")
        }
    }
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks, indent=2))
    (plugin / "commands").mkdir()
    (plugin / "commands" / "hello.md").write_text(HELLO_COMMAND)
    return plugin


@pytest.fixture
def probe_plugin(tmp_path: Path) -> Path:
    return make_probe_plugin(tmp_path / "plugins")


@pytest.fixture
def hook_log(tmp_path: Path) -> Path:
    path = tmp_path / "hook-log"
    path.mkdir()
    return path


def read_hook_log(log_dir: Path, event: str) -> list[dict[str, Any]]:
    path = log_dir / f"{event}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_write_fires_post_tool_use_and_stop(
    claude: ClaudeRunner,
    fake_anthropic: FakeAnthropic,
    probe_plugin: Path,
    hook_log: Path,
    git_repo: Path,
) -> None:
    fake_anthropic.script = [
        [
            Text("Writing the file."),
            ToolUse("Write", {"file_path": "{workdir}/hello.txt", "content": "hello world\n"}),
        ],
        [Text("Created hello.txt.")],
    ]
    run = claude(
        "Please write hello.txt",
        probe_plugin,
        extra_env={"PROBE_LOG_DIR": str(hook_log)},
    )
    assert run.ok, run.describe()
    assert (git_repo / "hello.txt").read_text() == "hello world\n"
    assert run.result is not None
    assert run.result["result"] == "Created hello.txt."
    assert run.result["permission_denials"] == []

    posts = read_hook_log(hook_log, "PostToolUse")
    assert [p["tool_name"] for p in posts] == ["Write"]
    assert posts[0]["tool_input"]["file_path"] == str(git_repo / "hello.txt")
    assert posts[0]["cwd"] == str(git_repo)
    stops = read_hook_log(hook_log, "Stop")
    assert len(stops) == 1
    assert stops[0]["stop_hook_active"] is False
    assert stops[0]["last_assistant_message"] == "Created hello.txt."
    assert stops[0]["session_id"] == posts[0]["session_id"]

    responses = run.hook_responses()
    assert [e["hook_event"] for e in responses] == ["PostToolUse", "Stop"], run.describe()
    assert all(e["exit_code"] == 0 and e["outcome"] == "success" for e in responses)
    assert len(run.hook_events()) == 2 * len(responses)  # each has a hook_started

    mains = fake_anthropic.main_requests()
    assert [r.turn for r in mains] == [0, 1]
    assert fake_anthropic.side_requests() == []
    assert "Please write hello.txt" in fake_anthropic.main_body_text(0)
    assert "hello world" in fake_anthropic.main_body_text(1)  # the tool_use went back


def test_stop_block_reason_reaches_the_model(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, probe_plugin: Path, hook_log: Path
) -> None:
    fake_anthropic.script = [[Text("First answer.")], [Text("Second answer.")]]
    run = claude(
        "Say something",
        probe_plugin,
        extra_env={"PROBE_LOG_DIR": str(hook_log), "PROBE_STOP_BLOCK_ONCE": "MARKER-123"},
    )
    assert run.ok, run.describe()
    mains = fake_anthropic.main_requests()
    assert len(mains) == 2, fake_anthropic.dump_log()
    assert "MARKER-123" not in mains[0].raw
    assert "MARKER-123" in mains[1].raw
    stops = read_hook_log(hook_log, "Stop")
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert run.result is not None and run.result["result"] == "Second answer."
    stop_outputs = [e["stdout"] for e in run.hook_responses("Stop")]
    assert "MARKER-123" in stop_outputs[0]
    assert stop_outputs[1] == ""


def test_slash_command_expands_with_bang_output(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, probe_plugin: Path, hook_log: Path
) -> None:
    fake_anthropic.script = [[Text("Hello back.")]]
    run = claude(
        f"/{PLUGIN_NAME}:hello arg",
        probe_plugin,
        extra_env={"PROBE_LOG_DIR": str(hook_log)},
    )
    assert run.ok, run.describe()
    body = fake_anthropic.main_body_text(0)
    assert f"<command-name>/{PLUGIN_NAME}:hello</command-name>" in body
    assert "HELLO-CMD args=[arg]" in body
    assert "BANG: BANG_42" in body
    assert "$((6*7))" not in body
    assert len(fake_anthropic.main_requests()) == 1
