"""`autopilot-codex run` with the real Codex CLI as the implementer (fake Responses API).

Every round is a fresh `codex exec --json` the driver starts with its default flags; the hooks
come from ``install codex --user`` (trusted, no bypass flag), so each round's session gets the
rails while the driver owns the loop. Where the machine allows it, each round runs in a
loopback-only network namespace, the fake model's port relayed in (see ``codex_cli.py``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.commands import install
from autopilot_codex.paths import project_dir

from .autopilot_helpers import LAUNCHER, Autopilot
from .claude_cli import git
from .codex_cli import RELAY_SCRIPT, base_env, netns_prefix
from .fake_codex_model import Fail, FakeCodexModel, Hold, Patch, Say, Shell
from .netns_relay import UnixToTcp

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
GOAL = "add hello.txt"
VERIFY = "Verify the objective in the handoff file"
WRAP_UP = "this is the last round"


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Iterator[Autopilot]:
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
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
        with UnixToTcp([self.fake.port]) as relay:
            return subprocess.run(
                self.command(args),
                capture_output=True,
                text=True,
                env=self.env(relay),
                timeout=timeout,
                check=False,
            )

    def command(self, args: Sequence[str]) -> list[str]:
        return [str(LAUNCHER), "-C", str(self.ap.repo), "run", *args, "--json"]

    def env(self, relay: UnixToTcp) -> dict[str, str]:
        """The driver's environment; its rounds reach the fake through `relay`."""
        env = {**base_env(self.home, self.codex_home), **self.ap.env(NO_MANAGER)}
        host = [str(self.codex_bin)]
        prefix = netns_prefix()
        if prefix is not None:
            forwards = [f"--forward={spec}" for spec in relay.forwards()]
            host = [*prefix, sys.executable, str(RELAY_SCRIPT), *forwards, "--", *host]
        env["AUTOPILOT_CODEX_CODEX_CMD"] = " ".join(host)
        # Codex refuses to create its helper binaries (apply_patch in a workspace-write sandbox
        # needs them) when CODEX_HOME is under the temp dir, as pytest's tmp_path is. A temp dir
        # of its own keeps CODEX_HOME outside it, as in a real install.
        scratch = self.home / "tmp"
        scratch.mkdir(parents=True, exist_ok=True)
        env["TMPDIR"] = str(scratch)
        return env

    def record(self, proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        record: dict[str, Any] = json.loads(proc.stdout)
        return record

    def rollout(self) -> list[dict[str, Any]]:
        # In the state home, in the driver's custody: never in the worktree a round writes.
        path = project_dir(self.ap.repo, self.ap.home) / "rounds" / "rollout.jsonl"
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
    # Read from the real CLI's stream: the last action and the usage the fake reported. The
    # round's own `git commit` fails in its sandbox (the driver commits); the pinned CLI reports
    # that refused command in its `--json` stream on some runs and not on others, so the last
    # action is that command or the patch before it.
    assert any(s in done[0]["last_action"] for s in ("git commit", "edit: ")), done[0]
    assert done[0]["last_action"].endswith(("hello.txt", '"add hello"\'')), done[0]
    assert names(done, "tokens") == [3 * 110, 110]
    # Priced by the driver for the model config.toml names (gpt-5.5: 100 input tokens at $5
    # and 10 output at $30 per million, each request).
    assert names(done, "cost_usd") == pytest.approx([3 * 0.0008, 0.0008])
    assert names(done, "unpriced") == ["", ""]
    prompts = rounds.prompts()
    assert len(prompts) == 2 and len(fake_codex.model_requests) == 4
    assert VERIFY not in prompts[0] and VERIFY in prompts[1]
    # The round's own commit fails (the wall keeps `.git` read-only; no --add-dir gives it
    # back): the driver commits, with the round's summary and a trailer naming the round.
    assert any("index.lock': Read-only file system" in r.raw for r in fake_codex.model_requests)
    assert git(ap.repo, "rev-list", "--count", f"{base}..HEAD").strip() == "1"
    body = git(ap.repo, "log", "-1", "--format=%B")
    assert body.startswith("Added and committed hello.txt.\n")
    assert "Autopilot-Codex-Round: 1" in body
    assert done[0]["commit"] == git(ap.repo, "rev-parse", "HEAD").strip()
    assert (ap.repo / "hello.txt").read_text() == "hello\n"
    assert ap.active_markers() == []
    assert ap.state()["style"] == "rounds" and ap.state()["status"] == "done"


def test_a_verifier_that_changes_files_does_not_exit(
    rounds: Rounds, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    fix = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-helo\n+hello\n*** End Patch\n"
    polish = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello!\n*** End Patch\n"
    fake_codex.script = [
        [add("hello.txt", "helo"), commit("hello.txt", "add hello")],
        "Added hello.txt.\n::potter(ready)",
        # A verifier that fixes something and still claims exit: git says it changed files.
        [Patch(fix), commit("hello.txt", "fix the typo")],
        "Fixed a typo; all good.\n::potter(exit)",
        [Patch(polish), commit("hello.txt", "polish")],
        "Polished it.\n::potter(exit)",
    ]

    proc = rounds(GOAL, "--implementer", "codex", "--rounds", "3", "--timeout", "90")

    assert proc.returncode == 2, explain(proc, fake_codex, ap.repo)
    record = rounds.record(proc)
    assert (record["status"], record["rounds_used"]) == ("round_limit", 3)
    done = rounds.rounds()
    assert names(done, "role") == ["implement", "verify", "verify"]
    assert names(done, "files_changed") == [["hello.txt"]] * 3
    assert names(done, "next") == ["verify", "verify", "round_limit"]
    assert names(done, "wrap_up") == [False, False, True]
    prompts = rounds.prompts()
    assert len(prompts) == 3 and len(fake_codex.model_requests) == 6
    # The wrap-up prompt went to the last round, and only to it.
    assert [WRAP_UP in p for p in prompts] == [False, False, True]
    assert (ap.repo / "hello.txt").read_text() == "hello!\n"
    assert ap.active_markers() == []
    assert ap.state()["status"] == "stopped_iteration_limit"


def test_the_rails_deny_a_reset_inside_a_round(
    rounds: Rounds, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    (ap.repo / "work.txt").write_text("committed\n")
    git(ap.repo, "add", "work.txt")
    git(ap.repo, "commit", "-q", "-m", "work")
    (ap.repo / "work.txt").write_text("uncommitted work\n")  # what a reset would throw away
    fake_codex.script = [
        [Shell("git reset --hard HEAD && touch reset-ran", call_id="call_reset")],
        "The reset was refused; nothing else to do.\n::potter(ready)",
        "Checked: nothing to change.\n::potter(exit)",
    ]

    proc = rounds("tidy up", "--implementer", "codex", "--rounds", "3", "--timeout", "90")

    assert proc.returncode == 0, explain(proc, fake_codex, ap.repo)
    (denied,) = fake_codex.model_requests[1].outputs_for("call_reset")
    assert "autopilot-codex safety rail [reset-hard]" in denied, denied
    assert not (ap.repo / "reset-ran").exists()
    assert (ap.repo / "work.txt").read_text() == "uncommitted work\n"
    assert names(rounds.rounds(), "files_changed") == [[], []]
    assert rounds.record(proc)["status"] == "complete"


def test_a_failed_round_is_retried(
    rounds: Rounds, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    fake_codex.script = [
        Fail(500, "the model is down"),
        [add("hello.txt", "hello"), commit("hello.txt", "add hello")],
        "Added hello.txt.\n::potter(ready)",
        "All there.\n::potter(exit)",
    ]

    proc = rounds(GOAL, "--implementer", "codex", "--rounds", "2", "--timeout", "90")

    assert proc.returncode == 0, explain(proc, fake_codex, ap.repo)
    record = rounds.record(proc)
    assert (record["status"], record["rounds_used"]) == ("complete", 2)
    done = rounds.rounds()
    assert [(r["round"], r["attempt"], r["role"]) for r in done] == [
        (1, 1, "implement"),
        (1, 2, "implement"),
        (2, 1, "verify"),
    ]
    assert names(done, "outcome")[1:] == ["ok", "ok"]
    assert done[0]["outcome"] in ("crashed", "stream_error"), done[0]
    assert done[0]["next"] == "retry" and done[0]["exit_code"] != 0
    # The retry is the same round: a fresh process with the same prompt, not a verifier.
    prompts = rounds.prompts()
    assert len(prompts) == 3 and prompts[1].count(VERIFY) == 0
    assert (ap.repo / "hello.txt").read_text() == "hello\n"


def test_resume_after_an_interruption(
    rounds: Rounds, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    held = Hold("never seen: the round is interrupted first")
    fake_codex.script = [
        [add("hello.txt", "hello"), commit("hello.txt", "add hello")],
        "Added hello.txt.\n::potter(ready)",
        held,
        "Verified every requirement.\n::potter(exit)",
    ]
    args = [GOAL, "--implementer", "codex", "--rounds", "3", "--timeout", "90"]
    with UnixToTcp([fake_codex.port]) as relay:
        # A session of its own: the signal reaches the driver as a Ctrl-C in its terminal would.
        driver = subprocess.Popen(
            rounds.command(args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=rounds.env(relay),
            start_new_session=True,
        )
        try:
            # However long two rounds take on a loaded machine: until the verifier asks, or the
            # driver is gone (the suite's timeout bounds a hang).
            while not held.arrived.wait(0.5):
                assert driver.poll() is None, "the driver ended before the verifier asked"
            os.killpg(driver.pid, signal.SIGINT)
            out, err = driver.communicate(timeout=30)
        finally:
            held.release.set()
            if driver.poll() is None:
                os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode == 130, out + err
    assert rounds.record(subprocess.CompletedProcess([], 130, out, err))["status"] == "interrupted"
    assert [r["outcome"] for r in rounds.rounds()] == ["ok", "interrupted"]
    assert ap.active_markers() == []

    proc = rounds("--resume", "--timeout", "90")

    assert proc.returncode == 0, explain(proc, fake_codex, ap.repo)
    record = rounds.record(proc)
    assert (record["status"], record["rounds_used"]) == ("complete", 2)
    done = rounds.rounds()
    assert [(r["round"], r["role"], r["outcome"]) for r in done] == [
        (1, "implement", "ok"),
        (2, "verify", "interrupted"),
        (2, "verify", "ok"),
    ]
    # The resumed round is a fresh verifier process, told the same as the interrupted one.
    prompts = rounds.prompts()
    assert len(prompts) == 3 and VERIFY in prompts[1] and VERIFY in prompts[2]
    # The driver's commit of round 1, with round 1's summary.
    assert git(ap.repo, "log", "--format=%s", "-1").strip() == "Added hello.txt."
    assert ap.state()["status"] == "done"


def test_a_token_cap_ends_a_run_and_a_raise_resumes_the_same_run(
    rounds: Rounds, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    # Every model request of the fake reports 110 tokens, which the real CLI passes on in its
    # `turn.completed` usage: two requests a round for the first two rounds.
    fake_codex.script = [
        [add("a.txt", "a")],
        "Part a written.",
        [add("b.txt", "b")],
        "Part b written.",
        "Both parts are there.\n::potter(ready)",
        "All there.\n::potter(exit)",
    ]

    proc = rounds(GOAL, "--implementer", "codex", "--max-tokens", "400", "--timeout", "90")

    assert proc.returncode == 2, explain(proc, fake_codex, ap.repo)
    record = rounds.record(proc)
    assert (record["status"], record["rounds_used"]) == ("tokens", 2)
    assert record["why"] == "token limit reached: 440 of 400 tokens (40 over)"
    assert ap.state()["status"] == "stopped_tokens"
    refused = rounds("--resume")
    assert refused.returncode == 1 and "run --resume --max-tokens N" in refused.stderr

    proc = rounds("--resume", "--max-tokens", "2000")

    assert proc.returncode == 0, explain(proc, fake_codex, ap.repo)
    record = rounds.record(proc)
    assert (record["status"], record["rounds_used"], record["tokens"]) == ("complete", 4, 660)
    assert names(rounds.rounds(), "round") == [1, 2, 3, 4]
    assert [r["max_tokens"] for r in rounds.rollout() if r["kind"] == "raise"] == [2000]
