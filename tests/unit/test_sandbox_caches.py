"""Where a check's tool caches go: the loop's own folders, bound over the places the check's
environment names, with the tools' variables pointing there; as bubblewrap and Seatbelt say it."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from autopilot_codex.sandbox import bwrap, caches, checkcall, places, seatbelt
from autopilot_codex.sandbox.rules import Mount, Rules, mounts


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(tmp_path / "state"))
    return home


def _own(worktree: Path, name: str) -> str:
    return str(project_dir(worktree) / caches.FOLDER / name)


def test_a_place_the_user_named_is_bound_and_the_variable_points_at_the_loop(
    home: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "my-cache"
    mine.mkdir()
    plan = caches.plan(str(tmp_path / "wt"), {"HOME": str(home), "XDG_CACHE_HOME": str(mine)})
    own = _own(tmp_path / "wt", "xdg-cache")
    assert (own, str(mine)) in plan.bound
    assert ("XDG_CACHE_HOME", own) in plan.env and own in plan.own
    assert Path(own).stat().st_mode & 0o777 == 0o700
    assert ("GOFLAGS", "-modcacherw") in plan.env


def test_go_s_own_flags_are_kept(home: Path, tmp_path: Path) -> None:
    plan = caches.plan(str(tmp_path / "wt"), {"HOME": str(home), "GOFLAGS": "-mod=vendor"})
    assert ("GOFLAGS", "-mod=vendor -modcacherw") in plan.env


def test_cargo_s_caches_follow_cargo_home_and_only_its_caches_are_bound(
    home: Path, tmp_path: Path
) -> None:
    cargo = tmp_path / "cargo"
    (cargo / "registry").mkdir(parents=True)
    plan = caches.plan(str(tmp_path / "wt"), {"HOME": str(home), "CARGO_HOME": str(cargo)})
    places_bound = {place for _, place in plan.bound}
    assert places_bound == {str(cargo / "registry"), str(cargo / "git")}
    assert not any(name == "CARGO_HOME" for name, _ in plan.env)


def test_nothing_is_made_where_the_tool_is_not_set_up(home: Path, tmp_path: Path) -> None:
    """No `~/.m2`: nothing made for maven; `~/.gradle` there: its missing wrapper folder is
    made, but not through a link; a relative CARGO_HOME names no place; no HOME, no default
    places at all."""
    (home / ".gradle").mkdir()
    (home / ".gradle" / "caches").symlink_to(tmp_path / "nowhere")
    plan = caches.plan(str(tmp_path / "wt"), {"HOME": str(home), "CARGO_HOME": "rel"})
    made = ("daemon", "native", "wrapper")
    assert {place for _, place in plan.bound} == {str(home / ".gradle" / m) for m in made}
    assert sorted(p.name for p in home.rglob("*")) == [".gradle", "caches", *made]
    assert not (tmp_path / "nowhere").exists()
    assert caches.plan(str(tmp_path / "wt"), {}).bound == ()


def test_a_cache_inside_the_work_tree_is_not_bound_over(home: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    (worktree / ".cache").mkdir(parents=True)
    (home / ".npm").mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(worktree / ".cache")}
    rules = checkcall.rules(str(worktree), env)
    assert rules.bound == ((_own(worktree, "npm"), str(home / ".npm")),)
    assert str(worktree) in rules.writable and _own(worktree, "npm") in rules.writable


@pytest.mark.parametrize("named", ["/", "{home}", "{worktree}/.."])
def test_a_cache_named_around_the_home_or_the_work_tree_is_not_bound_over(
    home: Path, tmp_path: Path, named: str
) -> None:
    worktree = tmp_path / "wt"
    worktree.mkdir()
    place = named.format(home=home, worktree=worktree)
    rules = checkcall.rules(str(worktree), {"HOME": str(home), "XDG_CACHE_HOME": place})
    assert rules.bound == ()
    assert ("XDG_CACHE_HOME", _own(worktree, "xdg-cache")) in rules.env


def test_bubblewrap_binds_the_loop_s_folder_and_sets_the_variables(tmp_path: Path) -> None:
    own, place = tmp_path / "own", tmp_path / "home" / ".npm"
    own.mkdir()
    place.mkdir(parents=True)
    rules = Rules(bound=((str(own), str(place)),), env=(("npm_config_cache", str(own)),))
    assert mounts(rules) == [Mount("write", str(place), source=str(own))]
    argv = bwrap.argv("/usr/bin/bwrap", rules, "/", ["true"])
    assert "--bind" in argv and argv[argv.index("--bind") + 1 : argv.index("--bind") + 3] == [
        str(own),
        str(place),
    ]
    assert argv[argv.index("--setenv") : argv.index("--setenv") + 3] == [
        "--setenv",
        "npm_config_cache",
        str(own),
    ]


def test_seatbelt_writes_the_loop_s_folder_never_the_place(tmp_path: Path) -> None:
    own, place = tmp_path / "own", tmp_path / "home" / ".npm"
    own.mkdir()
    place.mkdir(parents=True)
    rules = Rules(bound=((str(own), str(place)),), env=(("npm_config_cache", str(own)),))
    text = seatbelt.profile(rules)
    assert f'(allow file-read* file-write* (subpath "{own}"))' in text
    assert str(place) not in text
    argv = seatbelt.argv(rules, "/", ["npm", "test"])
    assert argv[3:] == ["/usr/bin/env", f"npm_config_cache={own}", "npm", "test"]
    assert seatbelt.argv(Rules(), "/", ["true"])[3:] == ["true"]


def test_cargo_s_credentials_are_hidden_where_cargo_home_puts_them(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "cargo"))
    assert str(tmp_path / "cargo" / "credentials.toml") in places.hidden(str(tmp_path))
    assert str(home / ".cargo" / "credentials.toml") in places.hidden(str(tmp_path))
    monkeypatch.setenv("CARGO_HOME", "rel")
    assert not any(p.startswith("rel") for p in places.hidden(str(tmp_path)))


def test_a_loop_folder_that_cannot_be_made_leaves_the_caches_as_they_were(
    home: Path, tmp_path: Path
) -> None:
    (home / ".npm").mkdir()
    root = project_dir(tmp_path / "wt") / caches.FOLDER
    root.parent.mkdir(parents=True)
    root.write_text("not a folder\n")
    assert caches.plan(str(tmp_path / "wt"), {"HOME": str(home)}) == caches.Plan(
        env=(("GOFLAGS", "-modcacherw"),)
    )
