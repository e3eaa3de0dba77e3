"""A third host that exists only in the tests: proof that a host is one package and one
registry line (`HOSTS.with_member("third", load)`), with nothing else in the bridge changed.

Its dialect differs from both real hosts wherever a host may differ: the final message comes
as `final_text`, a tool call as `tool`/`args`, its tools are `run_shell`, `write_file` and
`read_file`, its answers are `{"verdict": ..., "why": ...}`, and its headless CLI (`cli.py`)
prints `{"kind": ...}` events. The gate reads the session and its folder before any host is
known, by the field names in `gate.SESSION_FIELDS` and `gate.CWD_FIELDS`: it keeps those.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autopilot_codex.hookio import Answer, HookInput, text
from autopilot_codex.host import READY, Boundary, Estimate, Headless, HostReport, Installer
from autopilot_codex.prices import Price
from autopilot_codex.stream import StreamState, action
from tests.fakes.host_card import Card

_SETTINGS = re.compile(r"(^|/)\.third/hooks\.json$")


class ThirdHeadless:
    executable = "third"

    def command(
        self,
        prompt: str,
        base: Sequence[str],
        extra: Sequence[str] | None,
        wall: Sequence[str] = (),
    ) -> list[str]:
        return [*base, "--headless", *(extra or ("--yes",)), *wall, "--prompt", prompt]

    def credentials(self, environ: Mapping[str, str]) -> tuple[set[str], tuple[str, ...]]:
        return set(), ("THIRD_",)

    def model_of(self, cmd: Sequence[str], environ: Mapping[str, str]) -> str:
        return ""  # its end event reports dollars

    def estimate(self, spend: Estimate, event: dict[str, Any], own: Mapping[str, Price]) -> None:
        return None  # its stream tells no spend before its end event

    def read(self, state: StreamState, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "say":
            state.last_message = text(event.get("text"))
        elif kind == "act":
            state.last_action = action(text(event.get("tool")), event.get("args"))
        elif kind == "end":
            state.finished = True
            cost = event.get("usd")
            state.cost_usd = float(cost) if isinstance(cost, int | float) else None


class Third:
    name = "third"
    label = "Third CLI"
    edit_tools = frozenset({"write_file"})
    shell_tools = frozenset({"run_shell"})
    read_tools = frozenset({"read_file"})
    file_tools = frozenset({"write_file", "read_file"})
    session_env: str | None = "THIRD_SESSION"
    question_tools: frozenset[str] = frozenset()
    run_files: tuple[str, ...] = (".third/**",)
    config_env: str | None = "THIRD_HOME"
    cli_names = r"third|third-cli"
    cli_packages: tuple[str, ...] = ("@third/cli",)

    def logins(self, env: Mapping[str, str], home: Path) -> list[Path]:
        moved = env.get("THIRD_HOME", "").strip()
        return [(Path(moved) if moved else home / ".third") / "login"]

    def event(self, data: Mapping[str, Any], event: str) -> HookInput:
        args = data.get("args")
        return HookInput(
            event=event,
            session_id=text(data.get("session_id")) or None,
            cwd=text(data.get("cwd")) or None,
            tool_name=text(data.get("tool")),
            tool_input=args if isinstance(args, dict) else {},
            stop_hook_active=data.get("again") is True,
            last_assistant_message=text(data.get("final_text")),
        )

    def shell_command(self, tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
        return text(tool_input.get("cmd")) if tool_name in self.shell_tools else None

    def touched_paths(self, tool_name: str, tool_input: Mapping[str, Any]) -> list[str]:
        target = tool_input.get("target")
        return [target] if tool_name in self.file_tools and isinstance(target, str) else []

    def is_settings_file(self, path: str) -> bool:
        return _SETTINGS.search(path) is not None

    def is_spend_record(self, path: str) -> bool:
        return False  # its end event reports the spend; it keeps no record of its own

    def render(self, event: str, answer: Answer) -> str:
        if answer.deny:
            return json.dumps({"verdict": "refuse", "why": answer.deny})
        if answer.block:
            return json.dumps({"verdict": "again", "why": answer.block})
        return json.dumps({"note": answer.message}) if answer.message else ""

    def command(self, verb: str) -> str:
        return f":autopilot {verb}"

    def headless(self) -> Headless | None:
        return ThirdHeadless()

    def installer(self) -> Installer | None:
        return None

    def doctor(self, env: Mapping[str, str], repo: Path | None) -> HostReport:
        return HostReport(self.label, READY, ((READY, "Third CLI: a test fake"),))

    def boundary(self) -> Boundary | None:
        return None

    def spend_reader(self) -> None:
        return None


HOST = Third()

# What the hosts' shared contract tests need of it: its payloads and its answers.
CARD = Card(
    host=HOST,
    shell=lambda cmd: {"tool": "run_shell", "args": {"cmd": cmd}},
    write=lambda path: {"tool": "write_file", "args": {"target": path}},
    stop=lambda text, again: {"final_text": text, "again": again},
    deny=lambda why: {"verdict": "refuse", "why": why},
    block=lambda why, said: {"verdict": "again", "why": why},  # its answers carry no note
    note=lambda said: {"note": said},
    settings_file=".third/hooks.json",
    spend_record=None,
)
