"""`install codex --user` on the real Codex CLI: without --dangerously-bypass-hook-trust, the
installed hooks run, because the trust entries are what Codex itself would have written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.commands import install
from autopilot_codex.hosts.codex.trust import set_trust, trust_entries
from tests.conftest import plan_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import ROOT, Autopilot
from .codex_cli import codex_cli
from .codex_fixtures import CodexRunner
from .fake_codex_model import FakeCodexModel, Shell

pytestmark = pytest.mark.e2e

PLUGIN_ID = "autopilot-codex@autopilot-codex"


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path) -> Autopilot:
    return Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")


def test_installed_hooks_fire_without_the_bypass_flag(
    codex: CodexRunner,
    codex_home: Path,
    fake_codex: FakeCodexModel,
    openai_fake: FakeOpenAI,
    ap: Autopilot,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    assert "hooks trusted" in capsys.readouterr().out
    # A running loop, started from the terminal: the rails now guard this worktree.
    openai_fake.enqueue(plan_body(2), schema="Plan")
    planned = ap.cli("plan", "write", "two", "files", openai_url=openai_fake.base_url)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    openai_fake.enqueue(verdict_body("abort"), schema="Verdict")
    fake_codex.script = [
        [Shell("git reset --hard HEAD && touch reset-ran", call_id="call_reset")],
        "I was stopped by the rails.",
    ]

    run = codex(
        "clean up the repository",
        extra_env=ap.env(openai_fake.base_url),
        forward_ports=[openai_fake.port],
    )

    assert run.ok, run.describe()
    assert "--dangerously-bypass-hook-trust" not in run.cmd
    assert not (ap.repo / "reset-ran").exists()
    (denied,) = fake_codex.model_requests[1].outputs_for("call_reset")
    assert "[reset-hard]" in denied, denied
    # The Stop hook ran too: it asked the manager for a verdict and ended the loop.
    assert [r.schema_name for r in openai_fake.requests] == ["Plan", "Verdict"]
    assert ap.state()["status"] == "aborted"


def test_the_plugin_form_installs_and_its_trusted_hooks_fire(
    codex: CodexRunner,
    codex_bin: Path,
    codex_home: Path,
    home: Path,
    fake_codex: FakeCodexModel,
    openai_fake: FakeOpenAI,
    ap: Autopilot,
) -> None:
    for args in (
        ("plugin", "marketplace", "add", str(ROOT)),
        ("plugin", "add", f"{PLUGIN_ID}"),
    ):
        done = codex_cli(codex_bin, *args, home=home, codex_home=codex_home)
        assert done.returncode == 0, done.stdout + done.stderr
    # Plugin hooks are keyed by plugin id and relative path, hashed over the raw command.
    document = json.loads((ROOT / "hooks" / "codex.json").read_text())
    entries = trust_entries(f"{PLUGIN_ID}:hooks/codex.json", document)
    config = codex_home / "config.toml"
    config.write_text(set_trust(config.read_text(), entries))
    openai_fake.enqueue(plan_body(2), schema="Plan")
    planned = ap.cli("plan", "write", "two", "files", openai_url=openai_fake.base_url)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    openai_fake.enqueue(verdict_body("abort"), schema="Verdict")
    fake_codex.script = [
        [Shell("git reset --hard HEAD && touch reset-ran", call_id="call_reset")],
        "I was stopped by the rails.",
    ]

    run = codex(
        "clean up the repository",
        extra_env=ap.env(openai_fake.base_url),
        forward_ports=[openai_fake.port],
    )

    assert run.ok, run.describe()
    assert not (ap.repo / "reset-ran").exists()
    (denied,) = fake_codex.model_requests[1].outputs_for("call_reset")
    assert "[reset-hard]" in denied, denied
    assert ap.state()["status"] == "aborted"


def test_every_skill_reaches_codex_after_an_install(
    codex: CodexRunner,
    codex_home: Path,
    fake_codex: FakeCodexModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The Claude-only frontmatter keys (`disable-model-invocation`, `user-invocable`,
    `when_to_use`) neither hide a skill from Codex nor break its list."""
    env = {"CODEX_HOME": str(codex_home)}
    assert install.main(["install", "codex", "--user"], env=env) == 0
    capsys.readouterr()
    fake_codex.script = ["nothing to do"]
    run = codex("list your skills")
    assert run.ok, run.describe()
    prompt = fake_codex.raw(0)
    names = sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
    assert "codex-plan" in names
    for name in names:
        # Codex lists a skill as "- <name>: <description> (file: .../<installed dir>/SKILL.md)".
        assert f"- {name}: " in prompt, name
