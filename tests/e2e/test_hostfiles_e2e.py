"""Files a host reads to decide what to run, and the credential stores, on the real CLIs.

- A walled Claude Code implementer in a guarded worktree writes a project `.mcp.json` (Write
  tool, and a script the rails cannot read) and plants a nested repository's config: nothing it
  plants in `.mcp.json` lands, the next session's start stops the loop naming what did land, and
  the MCP server never starts.
- Every credential store, planted in a fake HOME (the hosts' logins where `CODEX_HOME` and
  `CLAUDE_CONFIG_DIR` put them), is read from Bash: inside the wall every read fails, outside
  it the same reads work. The Codex wall hides the same list from `codex exec`.

Files on disk, the loop's state and what the model was sent are the judge.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex import hosts
from autopilot_codex.hosts.claude.boundary import boundary_settings
from autopilot_codex.hosts.codex.boundary import boundary_overrides, prepare_worktree
from autopilot_codex.wall import WallSpec, check_wall_prereqs

from .autopilot_helpers import ROOT, Autopilot
from .codex_fixtures import CodexRunner
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse, Turn
from .fake_codex_model import FakeCodexModel, Shell
from .test_wall_e2e import tool_results

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
OWNER = "0b9a6c34-4f0e-4d55-9a53-6c0f6a7d1e01"


@pytest.fixture(autouse=True)
def _sandbox_tools() -> None:
    prereqs = check_wall_prereqs()
    if not prereqs.ok:
        pytest.skip(f"the hosts' sandbox needs {', '.join(prereqs.missing)} (fix: {prereqs.fix})")


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path) -> Iterator[Autopilot]:
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def spec(repo: Path, state: Path, home: Path, env: dict[str, str] | None = None) -> WallSpec:
    return hosts.roster().wall_spec(repo, state, home, env or {})


# -- .mcp.json and a nested repository's config ----------------------------------------------


def test_claude_a_planted_mcp_server_never_starts_and_the_next_session_stops_the_loop(
    claude: ClaudeRunner, ap: Autopilot, fake_anthropic: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    started = tmp_path / "mcp-server-started"
    server = {"mcpServers": {"helper": {"command": "sh", "args": ["-c", f"touch {started}"]}}}
    mcp = json.dumps(server)
    # A loop in this worktree, owned by another session: this one is an implementer in it.
    done = ap.cli("ralph", "--session-id", OWNER, "Keep", "going.", openai_url=NO_MANAGER)
    assert done.returncode == 0, done.stderr
    probe = "\n".join([
        f"printf '%s' {shlex.quote(mcp)} > .mcp.json; echo mcp-rc=$?",
        "git init -q vendor/dep && printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> "
        "vendor/dep/.git/config; echo nested-rc=$?",
        "",
    ])  # fmt: skip
    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/.mcp.json", "content": mcp})],
        [ToolUse("Write", {"file_path": "{workdir}/probe.sh", "content": probe})],
        [ToolUse("Bash", {"command": "bash probe.sh", "description": "probe"})],
        [Text("Done.")],
    ]
    settings = json.dumps(boundary_settings(spec(ap.repo, ap.home, home)))
    env = ap.env(NO_MANAGER)
    first = claude("work", ROOT, extra_env=env, extra_args=["--settings", settings])
    assert first.ok, first.describe()
    results = "\n".join(tool_results(first))
    # The Write tool is refused by the boundary's Edit rule (the rails would refuse it next), a
    # write from Bash by the sandbox, which keeps `.mcp.json` for a placeholder of its own.
    assert "denied by your permission settings" in results
    assert "mcp-rc=1" in results
    assert not (ap.repo / ".mcp.json").exists()
    assert (ap.repo / "vendor" / "dep" / ".git" / "config").exists()  # a nested repo: lands

    # The next session in the worktree (the fake answers it with text once the script is
    # played): its start stops the loop, naming what changed.
    second = claude("carry on", ROOT, extra_env=env, extra_args=["--settings", settings])
    assert second.ok, second.describe()
    state = ap.state()
    assert state["status"] == "stopped"
    assert "vendor/dep/.git/config (added)" in state["stop_reason"]
    assert "hostfiles.changed" in ap.event_names()
    assert not started.exists()


# -- credential stores -------------------------------------------------------------------------

# One readable file per store: the store itself, or a file inside it.
STORE_FILES = {
    ".git-credentials": ".git-credentials",
    ".config/git/credentials": ".config/git/credentials",
    ".netrc": ".netrc",
    ".ssh": ".ssh/id_ed25519",
    ".aws": ".aws/credentials",
    ".azure": ".azure/msal_token_cache.json",
    ".config/gcloud": ".config/gcloud/credentials.db",
    ".kube": ".kube/config",
    ".docker/config.json": ".docker/config.json",
    ".npmrc": ".npmrc",
    ".pypirc": ".pypirc",
    ".config/gh": ".config/gh/hosts.yml",
    ".cargo/credentials.toml": ".cargo/credentials.toml",
    ".cargo/credentials": ".cargo/credentials",
    ".gem/credentials": ".gem/credentials",
    ".m2/settings.xml": ".m2/settings.xml",
    ".m2/settings-security.xml": ".m2/settings-security.xml",
    ".gradle/gradle.properties": ".gradle/gradle.properties",
}


def plant_stores(home: Path, env: dict[str, str]) -> list[Path]:
    """Every store with a secret of its own, and the hosts' logins both where `env` moves
    them and at their default places. A login is JSON: the host may read its own."""
    files = [home / rel for rel in STORE_FILES.values()] + hosts.roster().logins(home, env)
    for n, path in enumerate(files):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"OPENAI_API_KEY": f"CRED-{n:02d}-SECRET"}))
    return files


def reader(files: list[Path]) -> str:
    return "; ".join(f"cat {shlex.quote(str(f))} 2>&1" for f in files) + "; true"


def test_every_credential_store_is_a_store_the_wall_hides() -> None:
    from autopilot_codex.wall import CREDENTIALS_IN_HOME

    assert set(STORE_FILES) == set(CREDENTIALS_IN_HOME)


def test_claude_no_credential_store_can_be_read_inside_the_wall_and_each_can_outside(
    claude: ClaudeRunner, fake_anthropic: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    moved = tmp_path / "moved"
    env = {"CODEX_HOME": str(moved / "codex"), "CLAUDE_CONFIG_DIR": str(moved / "claude")}
    files = plant_stores(home, env)
    state = tmp_path / "state-home"
    state.mkdir()
    settings = json.dumps(boundary_settings(spec(tmp_path, state, home, env)))
    command = reader(files)
    script: list[Turn] = [
        [ToolUse("Bash", {"command": command, "description": "read"})],
        [Text("Done.")],
    ]
    # Two runs, one after the other: the fake plays the turns in order.
    fake_anthropic.script = [*script, *script]
    walled = claude("read", extra_env=env, extra_args=["--settings", settings])
    assert walled.ok, walled.describe()
    (inside,) = tool_results(walled)
    assert "CRED-" not in inside, inside

    open_run = claude("read", extra_env=env)
    assert open_run.ok, open_run.describe()
    (outside,) = tool_results(open_run)
    for n in range(len(files)):
        assert f"CRED-{n:02d}-SECRET" in outside, (n, files[n])


def test_codex_no_credential_store_can_be_read_inside_its_wall(
    codex: CodexRunner,
    fake_codex: FakeCodexModel,
    git_repo: Path,
    home: Path,
    tmp_path: Path,
    codex_home: Path,
) -> None:
    # The run's own CODEX_HOME: its login is planted there, beside its config.
    env = {"CODEX_HOME": str(codex_home), "CLAUDE_CONFIG_DIR": str(tmp_path / "moved-claude")}
    files = plant_stores(home, env)
    state = tmp_path / "state-home"
    state.mkdir()
    wall = spec(git_repo, state, home, env)
    prepare_worktree(wall)
    fake_codex.script = [[Shell(reader(files), call_id="call_read")], "Done."]
    extra_args = [arg for item in boundary_overrides(wall) for arg in ("-c", item)]
    run = codex(
        "read", extra_args=extra_args, extra_env={"CLAUDE_CONFIG_DIR": env["CLAUDE_CONFIG_DIR"]}
    )
    assert run.ok, run.describe()
    (inside,) = fake_codex.model_requests[-1].outputs_for("call_read")
    assert "CRED-" not in inside, inside
    assert "Permission denied" in inside, inside
