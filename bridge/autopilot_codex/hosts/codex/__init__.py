"""The Codex CLI: its hook dialect, its hooks files, its terminal commands; its headless runner
(`headless`), install and trust (`install`, `trust`) and doctor check (`doctor`) load only
when asked. Standard library only (hot path).

Hook answers:
Every Codex hook output schema is closed (``additionalProperties: false``): one field too many
and the answer counts as a failed hook, which does not block. So each event gets exactly the
fields its schema has, and nothing Claude-only:

- Stop: ``decision``/``reason`` (+ ``systemMessage``); no ``hookSpecificOutput`` at all;
- PostToolUse: ``decision``/``reason``, ``hookSpecificOutput.additionalContext``; a block
  *replaces the tool's output* with the reason, so the reason must read as a tool result;
- PreToolUse: a deny is ``hookSpecificOutput.permissionDecision: "deny"`` with a reason;
- SessionStart / UserPromptSubmit: ``hookSpecificOutput.additionalContext``.

``block`` and ``deny`` need a non-empty reason on Codex; an empty one means "do not".
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...hookio import Answer, SharedDialect
from ...wall import config_folder
from ..spendplace import SpendPlace

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ...host import Boundary, Headless, HostReport, Installer, SpendReader

# The rest of the line, trailing spaces cut in Python: a lazy `(.+?)\s*$` read the spaces
# after each of its lengths, the square of a line the implementer writes.
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$", re.M)

# Events whose answers may carry hookSpecificOutput.additionalContext.
CONTEXT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit"})
# Events that can refuse to go on with decision/reason.
BLOCK_EVENTS = frozenset({"PostToolUse", "Stop", "SubagentStop", "UserPromptSubmit"})
# The files that hold Codex's hooks and their trust (and the switch that turns them off):
# a project's `.codex/`, the user's `$CODEX_HOME` (`~/.codex` by default).
_SETTINGS = re.compile(r"(^|/)\.codex/(config\.toml|hooks\.json|autopilot-codex-install\.json)$")
# The session rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`.
_SPEND = SpendPlace(re.compile(r"(^|/)\.codex/sessions(?=/|$)"), "CODEX_HOME", ".codex", "sessions")
_HOME_FILES = frozenset({"config.toml", "hooks.json", "autopilot-codex-install.json"})


# What Codex reads to decide what to run (its docs and source; docs/hosts-sandbox.md): `.codex/`
# (the project's `config.toml` with its MCP servers, hooks, `notify` and profiles; `hooks.json`;
# exec-policy rules) and `.agents/` (skills, plugin marketplaces), in the worktree and in every
# folder between it and the session's folder. `AGENTS.md` is text.
RUN_FILES: tuple[str, ...] = ("**/.codex/**", "**/.agents/**")
# Its login: `auth.json` in `$CODEX_HOME` (else `~/.codex`).
LOGIN = "auth.json"


class Codex(SharedDialect):
    name = "codex"
    label = "Codex"
    edit_tools = frozenset({"apply_patch"})
    shell_tools = frozenset({"Bash", "exec_command", "shell"})
    read_tools: frozenset[str] = frozenset()
    file_tools = frozenset({"apply_patch"})
    # The model's shell commands see the thread id under both names (pinned by a contract
    # test); hooks get it only in the payload.
    session_env: str | None = "CODEX_THREAD_ID"
    # Its PreToolUse fires for `request_user_input` and a deny reason is the tool's output the
    # model reads (pinned by a contract test; docs/hosts-questions.md).
    question_tools = frozenset({"request_user_input"})
    run_files: tuple[str, ...] = RUN_FILES
    config_env: str | None = "CODEX_HOME"
    # Its release binaries carry their target: `codex-x86_64-unknown-linux-musl`.
    cli_names = r"codex|codex-exec|codex-[a-z0-9_]+-(unknown|apple|pc)-[a-z0-9_-]+"
    cli_packages: tuple[str, ...] = ("@openai/codex",)
    # Its answer (`SharedDialect.render`): a refusal at PreToolUse is a deny (a block there
    # too), `decision: block` only where Codex reads it, context beside a refusal as well.
    context_events = CONTEXT_EVENTS
    block_events: frozenset[str] | None = BLOCK_EVENTS
    deny_events: frozenset[str] | None = frozenset({"PreToolUse"})
    block_as_deny = True
    context_beside_refusal = True

    def logins(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [config_folder(env, home, "CODEX_HOME", ".codex") / LOGIN]

    def touched_paths(self, tool_name: str, tool_input: Mapping[str, Any]) -> list[str]:
        if tool_name != "apply_patch":
            return []
        patch = tool_input.get("command") or tool_input.get("input") or ""
        if not isinstance(patch, str):
            return []
        return [path.rstrip() or path[:1] for path in _PATCH_PATH.findall(patch)]

    def is_settings_file(self, path: str) -> bool:
        path = path.replace("\\", "/")
        if _SETTINGS.search(path):
            return True
        home = os.environ.get("CODEX_HOME", "").strip()
        if not home or not path.startswith("/"):
            return False
        # `$CODEX_HOME` may be named anything: its files are the user's hooks all the same.
        parent, _, leaf = os.path.normpath(path).rpartition("/")
        return leaf in _HOME_FILES and _same_dir(parent, home)

    def is_spend_record(self, path: str) -> bool:
        return _SPEND.holds(path)

    def command(self, verb: str) -> str:
        return f"autopilot-codex {verb}"

    def headless(self) -> Headless | None:
        from .headless import HEADLESS

        return HEADLESS

    def installer(self) -> Installer | None:
        from .install import INSTALLER

        return INSTALLER

    def doctor(self, env: Mapping[str, str], repo: Path | None) -> HostReport:
        from .doctor import report

        return report(env, repo)

    def spend_reader(self) -> SpendReader | None:
        from .rollout import RolloutReader

        return RolloutReader()

    def boundary(self) -> Boundary | None:
        from .boundary import BOUNDARY

        return BOUNDARY


def _same_dir(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(os.path.expanduser(b))
    except (OSError, ValueError):
        return False


HOST = Codex()


def render(event: str, block: str, deny: str, context: str, message: str) -> str:
    """Codex's hook stdout for these parts, empty strings meaning none (the contract tests
    write the answers Codex must obey with it)."""
    return HOST.render(event, Answer(block, deny, context, message))
