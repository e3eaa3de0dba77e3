"""What the pinned Claude Code does with `async` and `asyncRewake` command hooks in `-p` mode.

Found on 2.1.332, and why the plugin does not use either to deliver background reviews:

- `asyncRewake: true` is run in the background only in an interactive session or with
  streaming input; in plain `-p` mode it is awaited like any hook, so a rewake hook that waits
  for a review would put the manager back on the critical path of every edit.
- `async: true` runs in the background everywhere, but what it prints and its exit code 2
  never reach the model.

So a background review's fix or reject is handed over by the next hook that can speak (the
next PostToolUse, or the Stop), on every host. If one of these fails after a version bump,
revisit `styles/autopilot/background.py` before updating the expectation.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse
from .test_cli_contract import make_plugin, message_texts

HOOK_SECONDS = 3
SCRIPT = f"cat >/dev/null; sleep {HOOK_SECONDS}; echo 'HOOK-FINDING-42' >&2; exit 2"


def background_hook(flag: str) -> dict[str, Any]:
    return {"type": "command", "command": SCRIPT, "timeout": 60, flag: True}


def timed_script(stamps: list[float]) -> list[Any]:
    """Write, then end the turn; each model request notes when it arrived."""

    def turn(blocks: list[Any]) -> Any:
        def answer(body: dict[str, Any]) -> list[Any]:
            stamps.append(time.monotonic())
            return blocks

        return answer

    return [
        turn([ToolUse("Write", {"file_path": "{workdir}/a.txt", "content": "a"})]),
        turn([Text("Finished.")]),
    ]


def run_with(flag: str, claude: ClaudeRunner, fake: FakeAnthropic, tmp_path: Path) -> list[float]:
    plugin = make_plugin(
        tmp_path / "plugins",
        flag.lower(),
        hooks={"PostToolUse": [{"matcher": "Write", "hooks": [background_hook(flag)]}]},
    )
    stamps: list[float] = []
    fake.script = timed_script(stamps)
    run = claude("Write a file", plugin)
    assert run.ok, run.describe()
    assert len(stamps) == 2, fake.dump_log()
    return stamps


def test_async_rewake_is_awaited_in_print_mode_and_its_exit_2_reaches_the_model(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    first, second = run_with("asyncRewake", claude, fake_anthropic, tmp_path)
    assert second - first >= HOOK_SECONDS - 0.2
    assert any("HOOK-FINDING-42" in t for t in message_texts(fake_anthropic, 1))


def test_async_runs_in_the_background_and_its_exit_2_is_dropped(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    first, second = run_with("async", claude, fake_anthropic, tmp_path)
    assert second - first < HOOK_SECONDS - 1
    texts = [t for i in range(2) for t in message_texts(fake_anthropic, i)]
    assert not any("HOOK-FINDING-42" in t for t in texts)
