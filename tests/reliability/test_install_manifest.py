"""`install codex --project` and `uninstall codex --project` read the install's record from
`<repo>/.codex/autopilot-codex-install.json`, a file in the work tree: a repository can carry
one (committed by whoever wrote it, or left by an implementer of an unguarded loop). The user
runs the command outside any wall, trusting it to take back only what its install added. A
record naming the user's own folders, settings or trust is refused before anything is removed
or rewritten; only what an install of this repository would have written is ever touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli, make_repo

THEIRS_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-own-hook"}]}]}}


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def plant_record(repo: Path, record: dict[str, object]) -> None:
    (repo / ".codex").mkdir(exist_ok=True)
    (repo / ".codex" / "autopilot-codex-install.json").write_text(json.dumps(record))


@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_planted_install_record_removes_and_rewrites_nothing_of_the_users(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    work = tmp_path / "user-home" / "work"
    (work / "thesis").mkdir(parents=True)
    (work / "thesis" / "chapter1.tex").write_text("years of work\n")
    (work / "empty-but-mine").mkdir()
    settings = tmp_path / "user-home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(THEIRS_HOOKS))
    config = codex_home / "config.toml"
    trusted = '[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:00"\n'
    config.write_text(trusted)
    plant_record(
        repo,
        {
            "version": 1,
            "scope": "project",
            "hooks_file": str(settings),
            "groups": [{"event": "Stop", "group": THEIRS_HOOKS["hooks"]["Stop"][0]}],
            "skills": [str(work / "thesis")],
            "config_file": str(config),
            "trust_keys": ["/elsewhere/hooks.json:stop:0:0"],
            "created_dirs": [str(work / "empty-but-mine")],
        },
    )

    code, out = cli(capsys, "-C", str(repo), verb, "codex", "--project")

    assert (work / "thesis" / "chapter1.tex").read_text() == "years of work\n", out
    assert (work / "empty-but-mine").is_dir(), out
    assert json.loads(settings.read_text()) == THEIRS_HOOKS, out
    assert trusted in config.read_text(), out
    assert code != 0 and "autopilot-codex-install.json" in out, out


def test_a_record_of_this_repositorys_own_install_still_takes_it_back(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: the record an install wrote is believed, and everything it added goes."""
    repo = make_repo(tmp_path / "repo")
    assert cli(capsys, "-C", str(repo), "install", "codex", "--project", "--unguarded")[0] == 0
    assert (repo / ".agents" / "skills").is_dir()
    code, out = cli(capsys, "-C", str(repo), "uninstall", "codex", "--project")
    assert code == 0, out
    assert not (repo / ".codex").exists() and not (repo / ".agents").exists()


@pytest.mark.parametrize("link", [".codex", ".agents"])
def test_a_project_install_writes_nothing_through_a_link_out_of_the_repository(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    """A repository's `.codex` (or `.agents`) made a link to the user's Codex home: the
    project install would merge its hooks into the user's own hooks file, for every session."""
    repo = make_repo(tmp_path / "repo")
    mine = codex_home if link == ".codex" else tmp_path / "user-home" / "agents"
    mine.mkdir(parents=True, exist_ok=True)
    (mine / "hooks.json").write_text(json.dumps(THEIRS_HOOKS))
    before = sorted(p.name for p in mine.iterdir())
    (repo / link).symlink_to(mine)

    code, out = cli(capsys, "-C", str(repo), "install", "codex", "--project", "--unguarded")

    assert code != 0 and link in out, out
    assert sorted(p.name for p in mine.iterdir()) == before, out
    assert json.loads((mine / "hooks.json").read_text()) == THEIRS_HOOKS, out
