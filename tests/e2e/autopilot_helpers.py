"""Helpers for driving the autopilot-codex plugin inside the real Claude Code CLI.

A scenario owns three things: a git repository Claude works in, an autopilot state home
(``AUTOPILOT_CODEX_HOME``) and a fake OpenAI server that plays the manager. :class:`Autopilot`
bundles the first two and builds the environment every process of a scenario gets, so the
slash commands, the hooks and the terminal CLI all see the same loop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .claude_cli import ClaudeRun

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "bin" / "autopilot-codex"
PLUGIN = "autopilot-codex"
TEST_KEY = "sk-test-e2e-autopilot-0000"


@dataclass
class Autopilot:
    """One scenario's repository and state home."""

    repo: Path
    home: Path

    # -- environment -------------------------------------------------------------------------

    def env(self, openai_url: str, settings: Mapping[str, str] | None = None) -> dict[str, str]:
        """What the Claude run (and so every hook and slash command) gets on top of the
        harness's clean environment."""
        env = {
            "AUTOPILOT_CODEX_PYTHON": sys.executable,
            "AUTOPILOT_CODEX_HOME": str(self.home),
            "OPENAI_API_KEY": TEST_KEY,
            "OPENAI_BASE_URL": openai_url,
        }
        env.update(settings or {})
        return env

    def cli(
        self,
        *args: str,
        openai_url: str,
        settings: Mapping[str, str] | None = None,
        stdin: str = "",
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """``bin/autopilot-codex -C <repo> <args>`` from a terminal (no Claude session)."""
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "LANG": "C.UTF-8",
            "HOME": str(self.home.parent / "terminal-home"),
            **self.env(openai_url, settings),
        }
        return subprocess.run(
            [str(LAUNCHER), "-C", str(self.repo), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )

    # -- the loop's files --------------------------------------------------------------------

    def project_dirs(self) -> list[Path]:
        projects = self.home / "projects"
        return sorted(projects.iterdir()) if projects.is_dir() else []

    @property
    def project_dir(self) -> Path:
        dirs = self.project_dirs()
        assert len(dirs) == 1, f"expected one project dir under {self.home}, found {dirs}"
        assert dirs[0].name.startswith(self.repo.name + "-"), dirs[0].name
        return dirs[0]

    def state(self) -> dict[str, Any]:
        return cast(
            "dict[str, Any]",
            json.loads((self.project_dir / "state.json").read_text(encoding="utf-8")),
        )

    def events(self) -> list[dict[str, Any]]:
        path = self.project_dir / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    def event_names(self) -> list[str]:
        return [e["event"] for e in self.events()]

    def active_markers(self) -> list[Path]:
        active = self.home / "active"
        return sorted(active.iterdir()) if active.is_dir() else []

    def snapshot(self) -> dict[str, bytes]:
        """Every file of the state home, for "nothing changed" checks; not the shadow
        history's (shadow/), which every session's tool calls add to."""
        if not self.home.exists():
            return {}
        return {
            str(p.relative_to(self.home)): p.read_bytes()
            for p in sorted(self.home.rglob("*"))
            if p.is_file()
            and p.name != "state.lock"
            and not any(
                part.startswith(("shadow", ".shadow")) for part in p.relative_to(self.home).parts
            )
        }


# -- reading a Claude run ----------------------------------------------------------------------


def hook_answers(run: ClaudeRun, event: str) -> list[dict[str, Any]]:
    """The parsed stdout of every ``event`` hook response ({} for an empty answer)."""
    answers = []
    for response in run.hook_responses(event):
        stdout = (response.get("stdout") or "").strip()
        answers.append(json.loads(stdout) if stdout.startswith("{") else {"_raw": stdout})
    return answers


def stop_blocks(run: ClaudeRun) -> list[str]:
    """The reasons of every Stop hook answer that blocked."""
    return [a.get("reason", "") for a in hook_answers(run, "Stop") if a.get("decision") == "block"]


def hook_stdouts(run: ClaudeRun) -> list[tuple[str, str]]:
    return [(r.get("hook_event", ""), r.get("stdout") or "") for r in run.hook_responses()]
