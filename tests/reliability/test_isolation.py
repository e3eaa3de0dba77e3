"""Every Python process of the bridge starts isolated: a module the implementer plants in the
work tree, in the cwd or on a PYTHON* variable is never imported by a hook, the review worker
or a command. Each planted module writes a canary file when imported; none may appear.

All through the real launcher (and, for the review, the real detached worker it starts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import edit_payload, payload, review_body, run_launcher
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import state_of
from tests.reviews import wait_reviews

# Names a Python start, the gate, the engine or the worker would import if it searched the
# cwd or a planted path first.
PLANTED = (
    "contextlib",
    "json",
    "sitecustomize",
    "usercustomize",
    "site",
    "os",
    "typing",
    "subprocess",
    "pathlib",
    "hashlib",
    "autopilot_codex",
)


def plant(folder: Path, canaries: Path) -> None:
    """A module per name that leaves a canary when imported (and a package for the bridge)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        code = f"open({str(canaries / (folder.name + '-' + name))!r}, 'w').close()\n"
        if name == "autopilot_codex":
            (folder / name).mkdir(exist_ok=True)
            (folder / name / "__init__.py").write_text(code)
        else:
            (folder / f"{name}.py").write_text(code)


@pytest.fixture
def canaries(planned: Path, tmp_path: Path) -> Path:
    """Planted modules at the repo root, in a subfolder used as cwd, and in a directory the
    PYTHON* variables point at."""
    found = tmp_path / "canaries"
    found.mkdir()
    plant(planned, found)
    plant(planned / "sub", found)
    planted = tmp_path / "planted"
    plant(planted, found)
    (planted / "startup.py").write_text(f"open({str(found / 'startup')!r}, 'w').close()\n")
    return found


def hostile_env(tmp_path: Path, home: bool = True) -> dict[str, str]:
    """PYTHON* variables pointing at the planted directory. PYTHONHOME there would stop an
    unisolated interpreter from starting at all (a hook that fails open)."""
    planted = tmp_path / "planted"
    env = {
        "PYTHONPATH": str(planted),
        "PYTHONSTARTUP": str(planted / "startup.py"),
        "PYTHONUSERBASE": str(planted),
        "PYTHONINSPECT": "",
    }
    if home:
        env["PYTHONHOME"] = str(planted)
    return env


def fired(canaries: Path) -> list[str]:
    return sorted(p.name for p in canaries.iterdir())


@pytest.mark.parametrize("where", [".", "sub"])
def test_a_hook_imports_nothing_planted(
    planned: Path, canaries: Path, tmp_path: Path, where: str
) -> None:
    cwd = planned / where
    data = payload(
        "PreToolUse", cwd, tool_name="Bash", tool_input={"command": "git push --force origin main"}
    )
    out = run_launcher(
        ["hook", "PreToolUse", "--host", "claude"],
        json.dumps(data).encode(),
        cwd=cwd,
        env=hostile_env(tmp_path),
    )
    assert out.code == 0, out.stderr
    # The hook really ran the rails (a deny), and imported nothing planted on the way.
    assert json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert fired(canaries) == []


def test_an_idle_hook_elsewhere_imports_nothing_planted(
    planned: Path, canaries: Path, tmp_path: Path
) -> None:
    # A loop runs (in `planned`), so the launcher starts Python for a hook in another repo.
    elsewhere = tmp_path / "elsewhere"
    plant(elsewhere, canaries)
    data = payload("Stop", elsewhere)
    out = run_launcher(
        ["hook", "Stop", "--host", "claude"],
        json.dumps(data).encode(),
        cwd=elsewhere,
        env=hostile_env(tmp_path),
    )
    assert (out.code, out.stdout) == (0, "")
    assert fired(canaries) == []


@pytest.mark.parametrize("home", [True, False], ids=["PYTHONHOME", "no-PYTHONHOME"])
def test_the_review_worker_imports_nothing_planted(
    planned: Path, canaries: Path, tmp_path: Path, manager: FakeOpenAI, home: bool
) -> None:
    manager.enqueue(review_body("approve"), schema="Review")
    (planned / "file1.txt").write_text("changed\n")
    out = run_launcher(
        ["hook", "PostToolUse", "--host", "claude"],
        json.dumps(edit_payload(planned)).encode(),
        cwd=planned,
        env=hostile_env(tmp_path, home),
    )
    assert out.code == 0, out.stderr
    state = wait_reviews(planned)
    # The worker ran (the review reached the manager) and imported nothing planted.
    assert len(manager.requests_for(schema="Review")) == 1
    reviewed = state["autopilot"]["last_review"] or state_of(planned)["autopilot"]["last_review"]
    assert reviewed is not None
    assert fired(canaries) == []


@pytest.mark.parametrize("verb", [["status"], ["next"], ["doctor"]])
def test_a_command_imports_nothing_planted(
    planned: Path, canaries: Path, tmp_path: Path, verb: list[str]
) -> None:
    out = run_launcher(verb, cwd=planned / "sub", env=hostile_env(tmp_path))
    assert "Fatal Python error" not in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "autopilot-codex" in out.stdout + out.stderr
    assert fired(canaries) == []


def test_the_environment_setup_imports_nothing_from_the_cwd(tmp_path: Path) -> None:
    """The SessionStart hook builds the venv in the background from the session's cwd: `-m venv`
    and `-m pip` once ran a `venv.py` or `pip/` planted there."""
    import os
    import subprocess

    from tests.conftest import LAUNCHER

    found = tmp_path / "canaries"
    found.mkdir()
    cwd = tmp_path / "work"
    plant(cwd, found)
    for name in ("venv", "ensurepip"):
        (cwd / f"{name}.py").write_text(f"open({str(found / name)!r}, 'w').close()\n")
    (cwd / "pip").mkdir()
    for name in ("__init__.py", "__main__.py"):
        (cwd / "pip" / name).write_text(f"open({str(found / 'pip')!r}, 'w').close()\n")
    env = {k: v for k, v in os.environ.items() if k != "AUTOPILOT_CODEX_PYTHON"}
    env["AUTOPILOT_CODEX_HOME"] = str(tmp_path / "home")
    subprocess.run([str(LAUNCHER), "bootstrap"], cwd=cwd, env=env, capture_output=True, timeout=600)
    # Whether or not the packages could be installed here, nothing planted ran.
    assert fired(found) == []
