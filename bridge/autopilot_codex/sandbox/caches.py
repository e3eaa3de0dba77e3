"""The caches a check's tools write in the home, writable in a folder of the loop's own.

Walled, the home is read-only, and the tools a check runs (`go test`, `cargo test`, `npm test`,
pytest with pip, uv, pre-commit, ruff or mypy) write their caches there: with nowhere to write,
a user's green suite read red. Each cache below gets a folder in the loop's own check home
(`projects/<key>/check-home/` in the state home), bound writable over the cache's place in the
home where that exists, and named by the tool's own variable where it has one (so a cache not
made yet is made there, not in the read-only home). Only the cache folders are bound, never the
folder around them: `~/.cargo` and `~/.m2` hold credentials and settings beside their caches.
The folders stay between the loop's checks, so a second `go test` is warm; the first is cold.

Poisoning: the implementer's code, run as a check, writes these caches, and the loop's later
checks read them, so a planted build artifact or test result could reach a later check unseen
by the review. That channel is there already: the work tree's ignored build output (`target/`,
`__pycache__`, `node_modules`) is kept between checks the same way, and whatever planted it ran
from a tree the review saw. What must not happen does not: the user's own tools outside the
loop never read these caches (the real ones are never written), and the implementer never
reaches them between checks (the state home is hidden from its wall). The folder is the work
tree's (`projects/<key>/`), so a later loop on the same work tree starts warm from it, and
`loops --older-than` removes it with the rest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..paths import project_dir

FOLDER = "check-home"


@dataclass(frozen=True)
class Cache:
    """`name`: its folder in the check home; `rel`: its default place under the home (or
    under `base`'s folder when that variable is set); `env`: the variable that names its place,
    set to the loop's folder for the check."""

    name: str
    rel: str = ""
    env: str = ""
    base: str = ""


CACHES = (
    # go-build, pip, uv, pre-commit, ruff and mypy's user caches, and most others.
    Cache("xdg-cache", ".cache", env="XDG_CACHE_HOME"),
    Cache("go-build", env="GOCACHE"),
    Cache("go-mod", "go/pkg/mod", env="GOMODCACHE"),
    Cache("npm", ".npm", env="npm_config_cache"),
    # CARGO_HOME would move cargo's config and credentials too: its caches are bound alone.
    Cache("cargo-registry", "registry", base="CARGO_HOME"),
    Cache("cargo-git", "git", base="CARGO_HOME"),
    Cache("maven", ".m2/repository"),
    # GRADLE_USER_HOME would move gradle.properties (often with credentials) too.
    Cache("gradle-caches", ".gradle/caches"),
    Cache("gradle-wrapper", ".gradle/wrapper"),
    Cache("gradle-daemon", ".gradle/daemon"),
    Cache("gradle-native", ".gradle/native"),
)
# Where a `base` variable is unset, the folder it defaults to under the home.
_BASES = {"CARGO_HOME": ".cargo"}


@dataclass(frozen=True)
class Plan:
    """`own`: the loop's folders a variable names, writable where they are; `bound`: (loop's folder, place in
    the home) pairs; `env`: the variables that point the tools at the loop's folders."""

    own: tuple[str, ...] = ()
    bound: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()


def plan(worktree: str, env: Mapping[str, str]) -> Plan:
    """The check home of the loop on `worktree`, its folders made (private to this user)."""
    home = env.get("HOME", "")
    root = project_dir(worktree) / FOLDER
    own: list[str] = []
    bound: list[tuple[str, str]] = []
    named: list[tuple[str, str]] = []
    for cache in CACHES:
        folder = root / cache.name
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue  # the check runs with that cache read-only, as it would have anyway
        if cache.env:
            own.append(str(folder))
            named.append((cache.env, str(folder)))
        place = _place(cache, env, home)
        if place is not None and _ready(place, made=not cache.env):
            bound.append((str(folder), str(place)))
    # go makes its module cache read-only, which no `rmtree` of the loop's folder (`loops
    # --older-than`) could remove.
    flags = " ".join(f for f in (env.get("GOFLAGS", ""), "-modcacherw") if f)
    return Plan(tuple(own), tuple(bound), (*named, ("GOFLAGS", flags)))


def _place(cache: Cache, env: Mapping[str, str], home: str) -> Path | None:
    """Where the tool would write this cache with the check's environment, if anywhere."""
    if cache.env and env.get(cache.env):
        return Path(env[cache.env])
    base = env.get(cache.base, "") if cache.base else ""
    if not base and home:
        base = str(Path(home) / _BASES.get(cache.base, ""))
    if not (cache.rel and base and Path(base).is_absolute()):
        return None
    return Path(base) / cache.rel


def _ready(place: Path, *, made: bool) -> bool:
    """Whether `place` is a folder to bind over. A cache with no variable of its own (cargo's,
    maven's, gradle's) that is not there yet is made, empty, as its tool would make it, when
    the folder around it exists: nothing walled can make a folder in the read-only home, and a
    bind needs one. Left alone when that folder is missing too (the tool is not set up)."""
    if made and not place.exists() and place.parent.is_dir() and not place.is_symlink():
        with contextlib.suppress(OSError):
            place.mkdir()
    return place.is_dir()
