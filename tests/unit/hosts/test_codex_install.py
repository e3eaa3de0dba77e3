"""`install codex` / `uninstall codex` on real files: merge, trust, skills, exact removal."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.commands import install
from autopilot_codex.hosts.codex import install as codex_install
from autopilot_codex.hosts.codex.trust import read_trusted, trust_entries

ROOT = Path(__file__).resolve().parents[3]
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop"]
SKILLS = sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
HAS_TOMLLIB = sys.version_info >= (3, 11)

USER_HOOKS: dict[str, Any] = {
    "description": "my own hooks",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "log-prompt"}]}],
    },
}
USER_TOML = '# mine\nmodel = "gpt-5.5"\n\n[tui]\nnotifications = true\n'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "codex-home"
    path.mkdir()
    return path


def run(capsys: pytest.CaptureFixture[str], home: Path, *argv: str) -> tuple[int, str]:
    rc = install.main(list(argv), env={"CODEX_HOME": str(home)})
    return rc, capsys.readouterr().out


def test_user_install_writes_hooks_skills_and_trust(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out = run(capsys, home, "install", "codex", "--user")
    assert rc == 0, out
    document = json.loads((home / "hooks.json").read_text())
    assert list(document["hooks"]) == EVENTS
    launcher = ROOT / "bin" / "autopilot-codex"
    for event, groups in document["hooks"].items():
        (group,) = groups
        command = group["hooks"][0]["command"]
        assert shlex.split(command) == ["/bin/sh", str(launcher), "hook", event, "--host", "codex"]
    assert document["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert sorted(p.name for p in (home / "skills").iterdir()) == [
        f"autopilot-codex-{name}" for name in SKILLS
    ]
    assert (home / "skills" / f"autopilot-codex-{SKILLS[0]}" / "SKILL.md").is_file()
    config = (home / "config.toml").read_text()
    expected = trust_entries(str(home / "hooks.json"), document)
    assert len(expected) == len(EVENTS)
    for key, value in expected.items():
        assert f'[hooks.state."{key}"]\ntrusted_hash = "{value}"\n' in config
    assert f"trust: {len(EVENTS)} hooks trusted" in out


def test_install_merges_and_uninstall_restores_exactly(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "hooks.json").write_text(json.dumps(USER_HOOKS, indent=4))
    (home / "config.toml").write_text(USER_TOML)
    (home / "skills" / "my-skill").mkdir(parents=True)

    assert run(capsys, home, "install", "codex")[0] == 0
    document = json.loads((home / "hooks.json").read_text())
    assert document["description"] == "my own hooks"
    assert document["hooks"]["Stop"][0] == USER_HOOKS["hooks"]["Stop"][0]
    assert len(document["hooks"]["Stop"]) == 2
    # The user's own group first, ours (the claim of a terminal-planned loop) after it.
    assert document["hooks"]["UserPromptSubmit"][0] == USER_HOOKS["hooks"]["UserPromptSubmit"][0]
    assert len(document["hooks"]["UserPromptSubmit"]) == 2
    config = (home / "config.toml").read_text()
    assert config.startswith(USER_TOML)
    # Our Stop group is the user's second one: the trust key says so.
    assert f'[hooks.state."{home}/hooks.json:stop:1:0"]' in config
    if HAS_TOMLLIB:
        assert set(read_trusted(config)) == set(
            trust_entries(str(home / "hooks.json"), document)
        ) - {
            f"{home}/hooks.json:stop:0:0",
            f"{home}/hooks.json:user_prompt_submit:0:0",
        }
    assert f'[hooks.state."{home}/hooks.json:user_prompt_submit:1:0"]' in config

    rc, out = run(capsys, home, "uninstall", "codex")
    assert rc == 0, out
    assert json.loads((home / "hooks.json").read_text()) == USER_HOOKS
    assert (home / "config.toml").read_text() == USER_TOML
    assert [p.name for p in (home / "skills").iterdir()] == ["my-skill"]
    assert not (home / codex_install.MANIFEST_NAME).exists()


def test_uninstall_of_a_fresh_install_leaves_no_file_behind(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, home, "install", "codex")[0] == 0
    assert run(capsys, home, "uninstall", "codex")[0] == 0
    # The skills/ folder the install created goes too (issue 27, item 6), and the config.toml
    # it created for its trust, which held nothing else (issue 36).
    assert sorted(p.name for p in home.iterdir()) == []


def test_reinstall_does_not_duplicate(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, home, "install", "codex")[0] == 0
    first = ((home / "hooks.json").read_text(), (home / "config.toml").read_text())
    assert run(capsys, home, "install", "codex")[0] == 0
    assert ((home / "hooks.json").read_text(), (home / "config.toml").read_text()) == first


def test_uninstall_without_an_install_says_so(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out = run(capsys, home, "uninstall", "codex")
    assert rc == 0
    assert "nothing to uninstall" in out
    assert list(home.iterdir()) == []


def test_project_install(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    rc, out = run(capsys, home, "install", "codex", "--project", "-C", str(repo / "src"))
    assert rc == 0, out
    hooks_file = repo / ".codex" / "hooks.json"
    assert list(json.loads(hooks_file.read_text())["hooks"]) == EVENTS
    assert len(list((repo / ".agents" / "skills").iterdir())) == len(SKILLS)
    assert f'[hooks.state."{hooks_file}:stop:0:0"]' in (home / "config.toml").read_text()
    assert "only in a trusted project" in out
    assert not (home / "hooks.json").exists()

    (home / "config.toml").write_text(f'[projects."{repo}"]\ntrust_level = "trusted"\n')
    rc, out = run(capsys, home, "install", "codex", "--project", "-C", str(repo))
    assert rc == 0, out
    assert "only in a trusted project" not in out

    assert run(capsys, home, "uninstall", "codex", "--project", "-C", str(repo))[0] == 0
    assert not (repo / ".codex").exists() and not (repo / ".agents").exists()
    assert (home / "config.toml").read_text() == f'[projects."{repo}"]\ntrust_level = "trusted"\n'


def test_a_project_install_and_uninstall_leave_the_machine_as_they_found_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: uninstall left an empty `.codex/` in the repository, and the
    `$CODEX_HOME/config.toml` the install created (for its trust), emptied."""
    repo, home = tmp_path / "repo", tmp_path / "fresh-codex-home"
    (repo / ".git").mkdir(parents=True)
    (repo / "own").mkdir()
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert run(capsys, home, "install", "codex", "--project", "-C", str(repo))[0] == 0
    assert (home / "config.toml").exists() and (repo / ".codex" / "hooks.json").exists()
    assert run(capsys, home, "uninstall", "codex", "--project", "-C", str(repo))[0] == 0
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before


def test_project_install_outside_a_repository_fails_clearly(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out = run(capsys, home, "install", "codex", "--project", "-C", str(tmp_path))
    assert rc == 1
    assert "not inside a git repository" in out
    assert list(home.iterdir()) == []


def test_config_we_cannot_edit_leaves_the_hooks_untrusted_and_says_how(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inline = '[hooks]\nstate = { "x" = { trusted_hash = "sha256:0" } }\n'
    (home / "config.toml").write_text(inline)
    rc, out = run(capsys, home, "install", "codex")
    assert rc == 0
    assert "NOT written" in out
    assert "--dangerously-bypass-hook-trust" in out
    assert (home / "config.toml").read_text() == inline
    assert (home / "hooks.json").exists()
    assert run(capsys, home, "uninstall", "codex")[0] == 0
    assert not (home / "hooks.json").exists()
    assert (home / "config.toml").read_text() == inline


def test_a_broken_hooks_file_is_not_touched(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "hooks.json").write_text("{not json")
    rc, out = run(capsys, home, "install", "codex")
    assert rc == 1
    assert "not valid JSON" in out
    assert (home / "hooks.json").read_text() == "{not json"
    assert sorted(p.name for p in home.iterdir()) == ["hooks.json"]


def test_a_foreign_skill_folder_is_not_overwritten(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = home / "skills" / f"autopilot-codex-{SKILLS[0]}"
    theirs.mkdir(parents=True)
    (theirs / "SKILL.md").write_text("not ours")
    rc, out = run(capsys, home, "install", "codex")
    assert rc == 1
    assert "was not installed by autopilot-codex" in out
    assert (theirs / "SKILL.md").read_text() == "not ours"
    assert not (home / "hooks.json").exists()
    assert not (home / codex_install.MANIFEST_NAME).exists()


def test_a_root_with_shell_characters_is_quoted(tmp_path: Path) -> None:
    root = tmp_path / 'odd "dir" $HOME `x`'
    (root / "hooks").mkdir(parents=True)
    shutil.copy(ROOT / "hooks" / "codex.json", root / "hooks" / "codex.json")
    hooks = codex_install.our_hooks(root)
    command = hooks["Stop"][0]["hooks"][0]["command"]
    assert command.startswith("/bin/sh ")
    # Codex runs the command through the shell: ask a real one what the words are.
    words = subprocess.run(
        ["bash", "-c", "printf '%s\\n' " + command.removeprefix("/bin/sh ")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert words == [f"{root}/bin/autopilot-codex", "hook", "Stop", "--host", "codex"]


def test_the_plugin_manifest_names_the_codex_hooks() -> None:
    manifest = json.loads((ROOT / ".codex-plugin" / "plugin.json").read_text())
    assert manifest["hooks"] == "./hooks/codex.json"
    assert manifest["skills"] == "./skills/"
    template = json.loads((ROOT / "hooks" / "codex.json").read_text())
    assert list(template) == ["hooks"]  # Codex rejects nothing here, but keep it bare
    for groups in template["hooks"].values():
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            for handler in group["hooks"]:
                assert set(handler) == {"type", "command", "timeout"}
                assert "--host codex" in handler["command"]


@pytest.mark.parametrize("shell", ["/bin/sh", "bash"])
def test_a_group_of_an_older_install_is_still_ours(shell: str) -> None:
    # Versions before the absolute `/bin/sh` wrote `bash "..."`: uninstall and doctor must
    # still find those groups, or an upgrade leaves a hook that finds bash on PATH.
    command = f'{shell} "/opt/old copy/bin/autopilot-codex" hook Stop --host codex'
    group = {"hooks": [{"type": "command", "command": command}]}
    assert codex_install.launcher_of(group) == "/opt/old copy/bin/autopilot-codex"
    document = {"hooks": {"Stop": [group]}}
    assert codex_install.without_ours(document)[1] == 1
