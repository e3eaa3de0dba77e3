"""The hook commands as the hosts run them: `sh -c` with the host's PATH, in the session's
folder. A PATH holding a relative folder (`node_modules/.bin`, `.`) resolves inside the work
tree, where the implementer writes: a `bash` planted there runs for every hook, unwalled, as
the user. Open: the commands name `bash` by name (docs/security.md names the fix: an absolute
interpreter, and the rounds driver finding the hosts' CLIs without relative folders)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

PLANTED = "#!/bin/sh\necho ran >> {log}\n"


def commands() -> list[str]:
    found: list[str] = []
    for name in ("hooks.json", "codex.json"):
        document = json.loads((ROOT / "hooks" / name).read_text())
        for groups in document["hooks"].values():
            found += [h["command"] for g in groups for h in g["hooks"]]
    return found


@pytest.mark.xfail(strict=True, reason="open: the hook commands find bash on PATH")
def test_no_hook_command_runs_a_program_planted_on_a_relative_path(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    planted = tree / "node_modules" / ".bin"
    planted.mkdir(parents=True)
    ran = tmp_path / "ran.log"
    for name in ("bash", "sh", "python3", "env"):
        (planted / name).write_text(PLANTED.format(log=ran))
        (planted / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"node_modules/.bin:{os.environ['PATH']}",
        "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "PLUGIN_ROOT": str(ROOT),
        "AUTOPILOT_CODEX_HOME": str(tmp_path / "home"),
    }
    for command in commands():
        subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=tree,
            env=env,
            input=b"{}",
            capture_output=True,
            check=False,
            timeout=60,
        )
    assert not ran.exists(), ran.read_text()
