"""`doctor` names the credential stores found here and whether each host's wall hides them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from autopilot_codex.commands.doctor import render, run_checks
from autopilot_codex.hosts.codex import boundary as codex_boundary
from autopilot_codex.hostwall import spec_for
from autopilot_codex.paths import state_home
from tests.integration.test_wall_status import boundary, write
from tests.integration.test_wall_status import machine as machine  # noqa: F401 (fixture)


def line(repo: Path) -> str:
    text = render(run_checks(str(repo)))
    return next(x for x in text.splitlines() if "credential stores:" in x)


def plant(home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("KEY")
    (home / ".git-credentials").write_text("https://u:p@example.com\n")
    codex_home = Path(os.environ["CODEX_HOME"])
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "auth.json").write_text("{}")


def wall_codex(repo: Path, home: Path) -> None:
    lines = codex_boundary.boundary_overrides(spec_for(repo, home))
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.write_text("\n".join(x.replace("=", " = ", 1) for x in lines) + "\n")


def test_none_found(repo: Path, machine: Path) -> None:
    assert "credential stores: none found" in line(repo)


def test_stores_an_unwalled_host_could_read_are_said_loudly(repo: Path, machine: Path) -> None:
    plant(machine)
    said = line(repo)
    assert said.startswith("--   credential stores: ~/.git-credentials, ~/.ssh, ")
    assert f"{os.environ['CODEX_HOME']}/auth.json" in said
    assert "READABLE by an implementer in Claude Code or Codex" in said


def test_a_walled_host_hides_them_and_the_other_is_named(
    repo: Path, machine: Path, tmp_path: Path
) -> None:
    plant(machine)
    wall_codex(repo, machine)
    said = line(repo)
    assert "hidden by Codex's wall; READABLE by an implementer in Claude Code" in said
    write(tmp_path / "managed.json", boundary(repo, machine))
    said = line(repo)
    assert said.startswith("ok   credential stores: ~/.git-credentials, ~/.ssh")
    assert said.endswith("hidden from the implementer by the wall")


def test_the_users_own_additions_are_listed(repo: Path, machine: Path, tmp_path: Path) -> None:
    secret = tmp_path / "vault.txt"
    secret.write_text("x")
    state_home().mkdir(parents=True, exist_ok=True)
    (state_home() / "config.json").write_text(json.dumps({"wall_deny_read": [str(secret)]}))
    assert str(secret) in line(repo)
