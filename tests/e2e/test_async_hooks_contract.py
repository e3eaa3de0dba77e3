"""What the pinned Claude Code does with `async` and `asyncRewake` command hooks, in `-p` mode:
the background review delivers its findings through an `asyncRewake` PostToolUse hook.

If one of these fails after a version bump, revisit how findings reach the model
(`styles/autopilot/background.py`) before updating the expectation."""

from __future__ import annotations

import time
from pathlib import Path

from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse
from .test_cli_contract import make_plugin, message_texts


def rewake_hook(script: str, *, rewake: bool = True) -> dict[str, object]:
    hook: dict[str, object] = {"type": "command", "command": script, "timeout": 60}
    hook["asyncRewake" if rewake else "async"] = True
    return hook


def _all_text(fake: FakeAnthropic) -> str:
    return "\n".join(
        "\n".join(message_texts(fake, i)) for i in range(len(fake.main_requests()))
    )


def test_async_rewake_does_not_hold_the_tool_and_its_exit_2_reaches_the_model(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    # The hook sleeps 3 s, then exits 2 with a reason; the model meanwhile runs a 6 s command.
    script = "cat >/dev/null; sleep 3; echo 'REWAKE-FIX-42' >&2; exit 2"
    plugin = make_plugin(
        tmp_path / "plugins",
        "rewake",
        hooks={"PostToolUse": [{"matcher": "Write", "hooks": [rewake_hook(script)]}]},
    )
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/a.txt", "content": "a"})],
        [ToolUse("Bash", {"command": "sleep 6"})],
        [Text("Finished.")],
        [Text("Seen.")],
    ]
    start = time.monotonic()
    run = claude("Write a file", plugin)
    assert run.ok, run.describe()
    assert "REWAKE-FIX-42" in _all_text(fake_anthropic), fake_anthropic.dump_log()
    # The Write's hook did not make the next model request wait for its 3 s.
    assert time.monotonic() - start < 30


def test_async_rewake_after_the_turn_ended_wakes_the_model_in_print_mode(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    # The model ends its turn at once; the hook's exit 2 comes 3 s later.
    script = "cat >/dev/null; sleep 3; echo 'LATE-FIX-43' >&2; exit 2"
    plugin = make_plugin(
        tmp_path / "plugins",
        "late",
        hooks={"PostToolUse": [{"matcher": "Write", "hooks": [rewake_hook(script)]}]},
    )
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/a.txt", "content": "a"})],
        [Text("Finished.")],
        [Text("Fixed after the late finding.")],
    ]
    run = claude("Write a file", plugin)
    assert run.ok, run.describe()
    print("MAIN REQUESTS", len(fake_anthropic.main_requests()), "WALL", run.wall_time)
    assert "LATE-FIX-43" in _all_text(fake_anthropic), fake_anthropic.dump_log()


def test_async_rewake_exit_0_is_silent(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    script = "cat >/dev/null; sleep 1; echo 'QUIET-44'; echo 'QUIET-ERR-44' >&2; exit 0"
    plugin = make_plugin(
        tmp_path / "plugins",
        "quiet",
        hooks={"PostToolUse": [{"matcher": "Write", "hooks": [rewake_hook(script)]}]},
    )
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/a.txt", "content": "a"})],
        [ToolUse("Bash", {"command": "sleep 3"})],
        [Text("Finished.")],
    ]
    run = claude("Write a file", plugin)
    assert run.ok, run.describe()
    assert "QUIET" not in _all_text(fake_anthropic)
    assert len(fake_anthropic.main_requests()) == 3
