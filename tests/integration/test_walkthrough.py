"""docs/testing.md's fresh-home walkthrough, run again: every `console` block's commands in a
fresh HOME (its own XDG folders and CODEX_HOME), and every line the doc shows must still be
printed, in order (issue 36: the doc cannot drift from what the commands print).

The doc's placeholders (`<repo>`, `<n>`, `<time>`, ...) stand for anything; runs of spaces and
of a table's rules count as one. The host CLIs are small stand-ins here: `claude` says what
Claude Code 2.1 says to `plugin marketplace add` and `plugin install` and writes its record of
installed plugins, and removes it at `plugin uninstall`; `codex` is only on PATH. A session (the `text` blocks, recorded once with the
real CLIs) is replaced by the hooks it would call; the rounds run's `claude -p` is the tests'
fake host, as the doc says.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FAKE_HOST, GIT_ENV, LAUNCHER, ROOT, plan_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

DOC = ROOT / "docs" / "testing.md"
START, END = "<!-- walkthrough -->", "<!-- /walkthrough -->"
PLACEHOLDER = re.compile(r"(<[a-z][a-z -]*>)")

CLAUDE = """#!/bin/sh
case "$*" in
"plugin marketplace add "*)
  echo "Adding marketplace…✔ Successfully added marketplace: autopilot-codex (declared in user settings)" ;;
"plugin install autopilot-codex@autopilot-codex")
  mkdir -p "$HOME/.claude/plugins"
  echo '{"version": 2, "plugins": {"autopilot-codex@autopilot-codex": [{"scope": "user"}]}}' \\
    > "$HOME/.claude/plugins/installed_plugins.json"
  echo 'Installing plugin "autopilot-codex@autopilot-codex"...✔ Successfully installed plugin: autopilot-codex@autopilot-codex (scope: user)' ;;
"plugin uninstall autopilot-codex@autopilot-codex")
  rm "$HOME/.claude/plugins/installed_plugins.json" || exit 1
  echo '✔ Successfully uninstalled plugin: autopilot-codex@autopilot-codex (scope: user)' ;;
*) echo "claude stand-in: $*" >&2; exit 1 ;;
esac
"""
CODEX = "#!/bin/sh\necho 'codex-cli 0.171.0'\n"
ROUNDS = [
    {"write": {"hello.txt": "hello\n"}, "commit": "add hello", "say": "Done.\n::potter(ready)"},
    {"say": "Every requirement checked against the files.\n::potter(exit)"},
]


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)


def steps(doc: str) -> list[Step | str]:
    """The walkthrough's checked commands with the lines each shows, and its session marks."""
    section = doc.split(START, 1)[1].split(END, 1)[0]
    found: list[Step | str] = []
    console = False
    for line in section.splitlines():
        if line.startswith("```"):
            console = line.strip() == "```console"
            continue
        mark = re.fullmatch(r"<!-- test: (\w+) -->", line.strip())
        if mark and not console:
            found.append(mark.group(1))
        elif console and line.startswith("$ "):
            found.append(Step(line[2:]))
        elif console and line.strip() not in ("", "…"):
            last = found[-1]
            assert isinstance(last, Step), line
            last.shown.append(line)
    return found


def squeezed(line: str) -> str:
    return re.sub(r" +", " ", re.sub(r"([━─])\1+", r"\1", line)).strip()


def pattern(line: str) -> re.Pattern[str]:
    parts = PLACEHOLDER.split(squeezed(line))
    return re.compile("".join(".+?" if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def unshown(shown: list[str], printed: str) -> list[str]:
    """The doc's lines the command no longer prints (in the doc's order)."""
    lines = [squeezed(x) for x in printed.splitlines()]
    at, missing = 0, []
    for line in shown:
        wanted = pattern(line)
        hit = next((i for i in range(at, len(lines)) if wanted.fullmatch(lines[i])), None)
        if hit is None:
            missing.append(line)
        else:
            at = hit + 1
    return missing


def machine_path() -> list[str]:
    """This machine's PATH without a folder that holds an `autopilot-codex` of its own."""
    return [
        d
        for d in os.environ["PATH"].split(os.pathsep)
        if d and not (Path(d) / "autopilot-codex").exists()
    ]


class Home:
    """A new user's machine: a fresh home, the stand-in CLIs, a fake manager server."""

    def __init__(self, tmp: Path, server: FakeOpenAI) -> None:
        self.home, self.work, shims = tmp / "home", tmp / "work", tmp / "shims"
        for folder in (self.home / ".local" / "bin", self.work, shims):
            folder.mkdir(parents=True)
        for name, text in (("claude", CLAUDE), ("codex", CODEX)):
            (shims / name).write_text(text)
            (shims / name).chmod(0o755)
        script = tmp / "rounds.json"
        script.write_text(json.dumps(ROUNDS))
        self.cwd = self.work
        self.server = server
        self.env = {
            **GIT_ENV,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "CODEX_HOME": str(self.home / ".codex"),
            # The stand-ins first, then the user's bin (install links the launcher there), then
            # this machine's git, bwrap and socat (not an installed launcher: CI's activated venv
            # puts its own `autopilot-codex` first, which a fresh home does not have).
            "PATH": os.pathsep.join(
                [str(shims), str(self.home / ".local" / "bin"), *machine_path()]
            ),
            "LANG": "C.UTF-8",
            "COLUMNS": "250",
            "AUTOPILOT_CODEX_PYTHON": sys.executable,
            # The resident helper would outlive the test.
            "AUTOPILOT_CODEX_HELPER": "0",
            "AUTOPILOT_CODEX_CLAUDE_CMD": f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_HOST))}",
            "FAKE_HOST_SCRIPT": str(script),
        }

    def run(self, command: str) -> str:
        if command.startswith("cd "):
            self.cwd = (self.cwd / command[3:].strip()).resolve()
            return ""
        env = dict(self.env)
        if command.startswith("<checkout>/bin/autopilot-codex install"):
            # The README's first command runs with the key exported (install stores it).
            env.update(OPENAI_API_KEY="sk-walkthrough-key", OPENAI_BASE_URL=self.server.base_url)
        line = command.replace("<checkout>", shlex.quote(str(ROOT)))
        # One stream, as a terminal shows both.
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=self.cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        return done.stdout

    def hook(self, event: str, **fields: Any) -> None:
        data = {
            "session_id": "walkthrough-session",
            "transcript_path": str(self.home / "no-transcript.jsonl"),
            "cwd": str(self.cwd),
            "hook_event_name": event,
            **fields,
        }
        subprocess.run(
            [str(LAUNCHER), "hook", event, "--host", "claude"],
            input=json.dumps(data),
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )

    def autopilot(self) -> None:
        """The session that ends the planned loop: its prompt claims it, the manager's verdict
        at its Stop is done."""
        self.server.enqueue(verdict_body("done", done=True), schema="Verdict")
        self.hook("UserPromptSubmit", prompt="add a greeting file")
        self.hook("Stop", stop_hook_active=False, last_assistant_message="Done.\n")

    def ralph(self) -> None:
        """The session of a ralph loop of two iterations: its prompt, then two Stops."""
        self.hook("UserPromptSubmit", prompt="go")
        for _ in range(2):
            self.hook("Stop", stop_hook_active=False, last_assistant_message="Wrote it.")


def test_the_fresh_home_walkthrough_prints_what_the_doc_shows(tmp_path: Path) -> None:
    walked = steps(DOC.read_text("utf-8"))
    assert sum(isinstance(s, Step) for s in walked) >= 15, walked
    with FakeOpenAI() as server:
        server.enqueue(plan_body(2), schema="Plan")
        machine = Home(tmp_path, server)
        sessions: dict[str, Callable[[], None]] = {
            "autopilot": machine.autopilot,
            "ralph": machine.ralph,
        }
        drift = []
        for step in walked:
            if isinstance(step, str):
                sessions[step]()
                continue
            printed = machine.run(step.command)
            missing = unshown(step.shown, printed)
            if missing:
                drift.append(f"$ {step.command}\n  not printed: {missing}\n  printed:\n{printed}")
    assert not drift, "\n\n".join(drift)
    # The shadow history's workers end before the test's folder goes (as conftest's `isolated`).
    for lock in (machine.home / ".autopilot-codex").glob("projects/*/shadow.lock"):
        from autopilot_codex.fileio import acquire

        fd = os.open(lock, os.O_RDWR)
        try:
            acquire(fd, 120)
        finally:
            os.close(fd)


@pytest.mark.parametrize(
    ("shown", "printed", "missing"),
    [
        (["a <n> b"], "x\na 12 b\n", []),
        (["a <n> b", "c"], "c\na 1 b\n", ["c"]),  # in the doc's order
        (["┃ A ┃ B ┃"], "┃ A      ┃ B ┃\n", []),
        (["spent <$0.01"], "spent <$0.01\n", []),
        (["gone"], "here\n", ["gone"]),
    ],
)
def test_the_walkthrough_check_can_fail(shown: list[str], printed: str, missing: list[str]) -> None:
    assert unshown(shown, printed) == missing
