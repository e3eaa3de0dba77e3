"""A slash command the implementer invokes itself: Claude Code's Skill tool runs a command's
`!` block before the model reads it, and no PreToolUse sees that shell (Claude Code fires
`PreSkillShellCommand` for it, which the bridge does not hook). The plugin's own commands run
the launcher (`stop`, `resume --budget`, `cancel`): model-invoked, they would let the
implementer steer its supervisor past the rails. Each command or skill with a `!` block (or
an inline `` !`...` ``) is the user's alone to run.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_BANG = re.compile(r"^```!|!`", re.M)
_USER_ONLY = re.compile(r"^disable-model-invocation:\s*true\s*$", re.M)


def _front(text: str) -> str:
    parts = text.split("---", 2)
    return parts[1] if text.startswith("---") and len(parts) == 3 else ""


def test_every_command_that_runs_a_shell_block_is_the_users_alone() -> None:
    files = [*ROOT.glob("commands/*.md"), *ROOT.glob("skills/*/SKILL.md")]
    assert files
    running = [f for f in files if _BANG.search(f.read_text(encoding="utf-8"))]
    assert running, "the plugin's commands run the launcher from `!` blocks"
    for path in running:
        front = _front(path.read_text(encoding="utf-8"))
        assert _USER_ONLY.search(front), f"{path.relative_to(ROOT)} is model-invocable"
