"""`autopilot-codex run` with the real Codex CLI as the implementer (fake Responses API).

Every round is a fresh `codex exec --json` the driver starts with its default flags; the hooks
come from ``install codex --user`` (trusted, no bypass flag), so each round's session gets the
rails while the driver owns the loop. Where the machine allows it, each round runs in a
loopback-only network namespace, the fake model's port relayed in (see ``codex_cli.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import codex_install

from .autopilot_helpers import LAUNCHER, Autopilot
from .claude_cli import git
from .codex_cli import RELAY_SCRIPT, base_env, netns_prefix
from .fake_codex_model import FakeCodexModel, Patch, Say, Shell
from .netns_relay import UnixToTcp

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
GOAL = "add hello.txt"
VERIFY = "Verify the objective in the handoff file"
WRAP_UP = "this is the last round"


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Iterator[Autopilot]:
    assert (
        codex_install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    )
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


@dataclass
class Rounds:
    """Runs `autopilot-codex run` (or `run --resume`) against this test's Codex and fake."""

    codex_bin: Path
    ap: Autopilot
    home: Path
    codex_home: Path
    fake: FakeCodexModel

    def __call__(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        env = {**base_env(self.home, self.codex_home), **self.ap.env(NO_MANAGER)}
        prefix = netns_prefix()
        with UnixToTcp([self.fake.port]) as relay:
            host = [str(self.codex_bin)]
            if prefix is not None:
                forwards = [f"--forward={spec}" for spec in relay.forwards()]
                host = [*prefix, sys.executable, str(RELAY_SCRIPT), *forwards, "--", *host]
            env["AUTOPILOT_CODEX_CODEX_CMD"] = " ".join(host)
            cmd = [str(LAUNCHER), "-C", str(self.ap.repo), "run", *args, "--json"]
            return subprocess.run(
                cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False
            )

    def record(self, proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        record: dict[str, Any] = json.loads(proc.stdout)
        return record

    def rollout(self) -> list[dict[str, Any]]:
        path = self.ap.repo / ".autopilot-codex" / "rollout.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def rounds(self) -> list[dict[str, Any]]:
        return [r for r in self.rollout() if r["kind"] == "round"]

    def prompts(self) -> list[str]:
        """The raw body of the first model request of every round (a fresh thread each)."""
        seen: set[str] = set()
        firsts: list[str] = []
        for req in self.fake.model_requests:
            thread = req.headers.get("thread-id") or req.headers.get("session-id") or ""
            if thread not in seen:
                seen.add(thread)
                firsts.append(req.raw)
        return firsts


@pytest.fixture
def rounds(
    codex_bin: Path, ap: Autopilot, home: Path, codex_home: Path, fake_codex: FakeCodexModel
) -> Rounds:
    return Rounds(codex_bin, ap, home, codex_home, fake_codex)


def add(name: str, content: str) -> Patch:
    body = "".join(f"+{line}\n" for line in content.splitlines())
    return Patch(f"*** Begin Patch\n*** Add File: {name}\n{body}*** End Patch\n")


def commit(name: str, subject: str) -> Shell:
    return Shell(f'git add {name} && git commit -q -m "{subject}"')


def explain(proc: subprocess.CompletedProcess[str], fake: FakeCodexModel, root: Path) -> str:
    logs = sorted((root / ".autopilot-codex" / "logs").glob("*.stderr"))
    tails = "".join(f"--- {p.name}\n{p.read_text()[-1500:]}\n" for p in logs)
    return (
        f"rc={proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n"
        f"{proc.stderr[-3000:]}\n{tails}--- fake: {len(fake.model_requests)} requests "
        f"{[r.answered for r in fake.model_requests]} errors={fake.errors}"
    )


def names(records: Sequence[dict[str, Any]], key: str) -> list[Any]:
    return [r[key] for r in records]


def test_a_clean_verifier_round_exits(
    rounds: Rounds, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    fake_codex.script = [
        [Say("Adding the file."), add("hello.txt", "hello")],
        [commit("hello.txt", "add hello")],
        "Added and committed hello.txt.\n::potter(ready)",
        "Every requirement checked against the files.\n::potter(exit)",
    ]
    base = git(ap.repo, "rev-parse", "HEAD").strip()

    proc = rounds(GOAL, "--implementer", "codex", "--rounds", "4", "--timeout", "90")

    assert proc.returncode == 0, explain(proc, fake_codex, ap.repo)
    record = rounds.record(proc)
    assert (record["status"], record["rounds_used"]) == ("complete", 2)
    assert record["message"] == "Every requirement checked against the files."
    done = rounds.rounds()
    assert names(done, "role") == ["implement", "verify"]
    assert names(done, "markers") == [["ready"], ["exit"]]
    assert names(done, "files_changed") == [["hello.txt"], []]
    prompts = rounds.prompts()
    assert len(prompts) == 2 and len(fake_codex.model_requests) == 4
    assert VERIFY not in prompts[0] and VERIFY in prompts[1]
    assert git(ap.repo, "rev-list", "--count", f"{base}..HEAD").strip() == "1"
    assert (ap.repo / "hello.txt").read_text() == "hello\n"
    assert ap.active_markers() == []
    assert ap.state()["style"] == "rounds" and ap.state()["status"] == "done"
