"""One Python environment: the venv `install` leaves under the state home is the one the hooks
of the installed plugin (not `--plugin-dir`) use, although Claude Code gives them its own
CLAUDE_PLUGIN_DATA. Before, the first session built a second venv and skipped its hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .claude_cli import build_env
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "bin" / "autopilot-codex"
KEY = "sk-test-e2e-one-venv-0000"


def prebuilt_venv(venv: Path) -> None:
    """The venv `install` builds, made offline: this interpreter's packages through a .pth
    (no download), and the launcher's stamp so `install` finds it current."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "host-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    with (ROOT / "bridge" / "requirements.txt").open("rb") as requirements:
        stamp = subprocess.run(["cksum"], stdin=requirements, capture_output=True, text=True)
    (venv / ".autopilot-codex-stamp").write_text(stamp.stdout.split()[0] + "\n")


def launcher(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAUNCHER), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def test_the_installed_plugins_hooks_use_the_venv_install_built(
    claude: ClaudeRunner,
    claude_bin: Path,
    home: Path,
    git_repo: Path,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
) -> None:
    state_home = home / ".autopilot-codex"  # the default, under the HOME Claude Code gets
    prebuilt_venv(state_home / "venv")
    with FakeOpenAI() as manager:
        terminal = build_env(home=home, tmpdir=tmp_path, anthropic_url=fake_anthropic.url)
        shim = tmp_path / "shim"
        shim.mkdir()
        (shim / "claude").symlink_to(claude_bin)
        terminal.update(
            PATH=f"{shim}{os.pathsep}{terminal['PATH']}",
            OPENAI_API_KEY=KEY,
            OPENAI_BASE_URL=manager.base_url,
        )
        installed = launcher(["install"], terminal, tmp_path)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        last = installed.stdout.rstrip().splitlines()[-1]
        assert last.startswith("Ready.") and "/autopilot-codex:codex-plan <goal>" in last

        from tests.conftest import plan_body

        manager.enqueue(plan_body(1), schema="Plan")
        planned = launcher(["-C", str(git_repo), "plan", "write", "file1.txt"], terminal, git_repo)
        assert planned.returncode == 0, planned.stdout + planned.stderr

        manager.enqueue(review_body("approve"), schema="Review")
        manager.enqueue(verdict_body("done"), schema="Verdict")
        fake_anthropic.script = [
            [ToolUse("Write", {"file_path": "{workdir}/file1.txt", "content": "one\n"})],
            [Text("Wrote file1.txt.")],
        ]
        run = claude(
            "Write file1.txt",
            None,  # the plugin as installed into Claude Code, not --plugin-dir
            extra_env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": manager.base_url},
        )
        assert run.ok, run.describe()
        for response in run.hook_responses():
            assert response.get("exit_code") == 0, json.dumps(response)
            assert "being set up" not in (response.get("stderr") or ""), json.dumps(response)
        # The hooks ran the bridge: the edit was reviewed and the Stop asked for a verdict.
        # (install's doctor first asked the model list, a free GET.)
        # (A Stop that came before the edit's background review started folds the two.)
        posts = [r.schema_name for r in manager.requests if r.method == "POST"]
        assert posts in (["Plan", "Review", "Verdict"], ["Plan", "Judgement"])
    data = home / ".claude" / "plugins" / "data"
    assert not list(data.glob("*/venv")), sorted(p.name for p in data.glob("*/*"))
