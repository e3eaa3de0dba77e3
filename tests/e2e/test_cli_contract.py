"""Facts about the pinned Claude Code version that the plugin design relies on.

If one of these fails after a version bump, revisit the plugin design before updating the
expectation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

FACTS_COMMAND = """---
description: Report what a command's bash pre-execution sees
allowed-tools: Bash
---
TEXT ROOT=[${CLAUDE_PLUGIN_ROOT}] DATA=[${CLAUDE_PLUGIN_DATA}] PROJ=[${CLAUDE_PROJECT_DIR}]
TEXT SID=[${CLAUDE_SESSION_ID}]
TEXT ARGS=[$ARGUMENTS]
INLINE: !`echo "INLINE-SID=[$CLAUDE_CODE_SESSION_ID]"`

```!
for v in CLAUDE_CODE_SESSION_ID CLAUDE_PLUGIN_ROOT CLAUDE_PLUGIN_DATA CLAUDE_PROJECT_DIR; do
  if [ -n "${!v+x}" ]; then echo "ENV $v=set"; else echo "ENV $v=unset"; fi
done
echo 'SQ-ROOT=[${CLAUDE_PLUGIN_ROOT}]'
echo 'SQ-ARGS=[$ARGUMENTS]'
echo "DQ-ARGS=[$ARGUMENTS]"
cat <<'EOF'
HEREDOC-ARGS=[$ARGUMENTS]
EOF
```
"""


def make_plugin(root: Path, name: str, *, hooks: dict[str, Any] | None = None) -> Path:
    plugin = root / name
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "0.0.1"})
    )
    if hooks is not None:
        (plugin / "hooks").mkdir()
        (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return plugin


def message_texts(fake: FakeAnthropic, i: int) -> list[str]:
    """Text of every message of main request ``i`` (string or text-block content)."""
    texts = []
    for message in json.loads(fake.main_body_text(i))["messages"]:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(b.get("text", "") for b in content if isinstance(b, dict)))
    return texts


def command_hook(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": 30}


def test_command_pre_execution_env_and_substitution(
    claude: ClaudeRunner,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    git_repo: Path,
    home: Path,
) -> None:
    plugin = make_plugin(tmp_path / "plugins", "facts")
    (plugin / "commands").mkdir()
    (plugin / "commands" / "facts.md").write_text(FACTS_COMMAND)
    fake_anthropic.script = [
        [ToolUse("Bash", {"command": 'printf %s "$CLAUDE_CODE_SESSION_ID" > bash-sid.txt'})],
        [Text("Noted.")],
    ]

    run = claude("/facts:facts plain $(echo INJECTED)", plugin)
    assert run.ok, run.describe()
    session_id = run.session_id
    expanded = next(t for t in message_texts(fake_anthropic, 0) if "TEXT ROOT=" in t)
    data_dir = home / ".claude" / "plugins" / "data" / "facts-inline"

    # The plugin variables are substituted as text in the body, also inside `!` commands ...
    assert f"TEXT ROOT=[{plugin}] DATA=[{data_dir}] PROJ=[{git_repo}]" in expanded
    assert f"SQ-ROOT=[{plugin}]" in expanded
    # ... but only the session id is in the environment of `!` commands.
    assert f"TEXT SID=[{session_id}]" in expanded
    assert f"INLINE-SID=[{session_id}]" in expanded
    assert "ENV CLAUDE_CODE_SESSION_ID=set" in expanded
    for name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR"):
        assert f"ENV {name}=unset" in expanded

    # $ARGUMENTS is pasted into the shell text before bash runs, even inside single quotes
    # and quoted heredocs; in double quotes the shell then evaluates what the user typed.
    assert "TEXT ARGS=[plain $(echo INJECTED)]" in expanded
    assert "SQ-ARGS=[plain $(echo INJECTED)]" in expanded
    assert "HEREDOC-ARGS=[plain $(echo INJECTED)]" in expanded
    assert "DQ-ARGS=[plain INJECTED]" in expanded

    # The model's Bash tool sees the session id too.
    assert (git_repo / "bash-sid.txt").read_text() == session_id


def test_hooks_that_ignore_stdin_and_system_messages(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, tmp_path: Path, git_repo: Path
) -> None:
    hooks = {
        "PostToolUse": [
            {
                "matcher": "Write",
                "hooks": [
                    command_hook("exit 0"),
                    command_hook("""printf '%s' '{"systemMessage":"POST-SYSMSG"}'"""),
                ],
            }
        ],
        "Stop": [
            {
                "hooks": [
                    command_hook("true"),
                    command_hook("""printf '%s' '{"systemMessage":"STOP-SYSMSG"}'"""),
                ]
            }
        ],
    }
    plugin = make_plugin(tmp_path / "plugins", "quiet", hooks=hooks)
    big = "y" * 1_000_000  # far beyond a pipe buffer: the CLI's stdin write hits a closed pipe
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/big.txt", "content": big})],
        [Text("Finished.")],
    ]

    run = claude("Write a big file", plugin)
    assert run.ok, run.describe()
    assert (git_repo / "big.txt").stat().st_size == len(big)

    responses = run.hook_responses()
    assert sorted((e["hook_event"], e["stdout"]) for e in responses) == [
        ("PostToolUse", ""),
        ("PostToolUse", '{"systemMessage":"POST-SYSMSG"}'),
        ("Stop", ""),
        ("Stop", '{"systemMessage":"STOP-SYSMSG"}'),
    ]
    for event in responses:
        assert (event["exit_code"], event["outcome"], event["stderr"]) == (0, "success", "")
    assert "hook" not in run.stderr.lower(), run.stderr
    assert "pipe" not in run.stderr.lower(), run.stderr

    # systemMessage is shown to the user as an informational event, never sent to the model.
    notices = [e["content"] for e in run.events_of("system", "informational")]
    assert "PostToolUse:Write says: POST-SYSMSG" in notices
    assert "Stop says: STOP-SYSMSG" in notices
    assert len(fake_anthropic.main_requests()) == 2
    assert all("SYSMSG" not in r.raw for r in fake_anthropic.requests)


def test_a_failing_bash_command_fires_post_tool_use_failure(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, tmp_path: Path, git_repo: Path
) -> None:
    # The bridge counts PostToolUseFailure as work (it resets the stall guard); this pins which
    # event a failing command fires.
    log = tmp_path / "events.log"
    record = f"cat >/dev/null; echo $0 >> {log}"
    hooks = {
        event: [{"hooks": [command_hook(f"bash -c '{record}' {event}")]}]
        for event in ("PostToolUse", "PostToolUseFailure")
    }
    plugin = make_plugin(tmp_path / "plugins", "failing", hooks=hooks)
    fake_anthropic.script = [
        [ToolUse("Bash", {"command": "exit 3"})],
        [ToolUse("Bash", {"command": "true"})],
        [Text("Finished.")],
    ]
    run = claude("Run two commands", plugin)
    assert run.ok, run.describe()
    assert log.read_text().split() == ["PostToolUseFailure", "PostToolUse"]
