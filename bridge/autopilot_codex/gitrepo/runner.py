"""The one way the bridge runs git: nothing the implementer wrote runs, nothing it set hides.

The implementer can write the work tree, its `.git/config`, `.git/info/*`, `~/.gitconfig` and
files on PATH; the bridge runs git with its own secrets in reach. So every call:

- runs a trusted binary (binary.py), never `git` from PATH;
- gets an environment built from an allowlist, so no key, token or `GIT_*` setting of the
  bridge's environment reaches git or anything git might start;
- reads no system or global config, and overrides each key of the repository's own config
  that runs a program or hides content (listed below, with the git version each needs);
- names its git directory and work tree (`--git-dir`, `--work-tree`) from the path the bridge
  knows, so `core.worktree` cannot point git at a decoy copy.

The repository's `.git/config` is always read; what cannot be switched off by name is a
clean/smudge/process filter, whose driver name is free: the drivers are read from the config
first and each is blanked (`filters.py`). A filter added between that reading and the call could
still run: a window of a few milliseconds, which the implementer would have to hit while the
bridge works. What hides content through files git always reads (`.git/info/exclude`, the
index's skip-worktree and assume-unchanged flags, `-diff` attributes) is handled by the callers
that read content (review.py, checks_tree.py, rounds/tree.py): they list untracked files
without the exclude files and read flagged paths anyway.

Needs git 2.36 (a boolean `core.fsmonitor`; GIT_CONFIG_GLOBAL 2.32, GIT_CONFIG_COUNT 2.31);
`doctor` checks it. Written and tested with git 2.39.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import BridgeError
from ..gitbinary import git_binary
from ..nofollow import small
from .filters import blanked

GIT_TIMEOUT_S = 60
# A `.git` file or `commondir`: one line naming a folder.
_DOT_GIT_MAX = 64 * 1024

# `-c key=value` pairs, each with the git version that first reads the key or value. A key an
# older git does not know is ignored by it.
OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.quotepath", "off"),  # 1.x: names as bytes, not C-quoted
    ("core.fsmonitor", "false"),  # 2.36 as a boolean (a hook path since 2.16)
    ("core.untrackedCache", "false"),  # 2.8: no cached view of untracked files
    ("core.hooksPath", os.devnull),  # 2.9: no hook of the repository runs
    ("core.pager", "cat"),  # 1.x
    ("core.editor", ":"),  # 1.x
    ("sequence.editor", ":"),  # 1.7.8
    ("core.askPass", ""),  # 1.7.1
    ("core.sshCommand", ""),  # 2.10
    ("core.gitProxy", ""),  # 1.x
    ("credential.helper", ""),  # 1.7.9; an empty value clears the list (2.9)
    ("protocol.allow", "never"),  # 2.12: no transport, so no lazy fetch of a partial clone
    ("diff.external", ""),  # 1.x; `--no-ext-diff` on every diff as well
    ("core.attributesFile", os.devnull),  # 1.6.0
    ("core.excludesFile", os.devnull),  # 1.5.x
    ("core.useReplaceRefs", "false"),  # 2.19; GIT_NO_REPLACE_OBJECTS for older ones
    ("core.symlinks", "true"),  # 1.5.x: a link is a link
    ("core.fileMode", "true"),  # 1.x: mode changes are seen
    ("core.trustctime", "true"),  # 1.6.x: an mtime reset cannot hide an edit
    ("core.checkStat", "default"),  # 1.8.2
    ("core.autocrlf", "false"),  # 1.5.x: bytes as stored
    ("core.bigFileThreshold", "512m"),  # 1.7.6: the default; larger counts as binary
    ("diff.relative", "false"),  # 2.28
    ("diff.noprefix", "false"),  # 1.x: the a/ b/ prefixes parsers expect
    ("diff.mnemonicPrefix", "false"),  # 1.6.x
    # Never enter a nested repository: its own config would run (nested.py). Callers also
    # pass `--ignore-submodules=all`, which `.gitmodules` cannot override.
    ("diff.ignoreSubmodules", "all"),  # 1.7.2
    ("diff.submodule", "short"),  # 1.7.11: never `diff`, which diffs inside the submodule
    ("submodule.recurse", "false"),  # 2.14
    ("status.submoduleSummary", "false"),  # 1.7.x: would run `git submodule summary`
    ("fetch.recurseSubmodules", "false"),  # 1.7.3
    ("push.recurseSubmodules", "no"),  # 2.7
    ("submodule.propagateBranches", "false"),  # 2.36
    ("status.showUntrackedFiles", "all"),  # 1.5.x
    ("color.ui", "false"),  # 1.5.x
    ("log.showSignature", "false"),  # 2.10: would run gpg
    ("commit.gpgSign", "false"),  # 2.0: would run gpg
    ("tag.gpgSign", "false"),  # 2.23
)

_IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
# Environment: only these are kept from the bridge's own; the rest is set here.
_KEPT = ("TMPDIR", "SYSTEMROOT", *_IDENTITY, "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")


@dataclass(frozen=True)
class Location:
    """Where a repository's files are: its work tree and its git directories."""

    work_tree: Path
    git_dir: Path
    common_dir: Path


def locate(path: Path) -> Location:
    """The repository holding `path`, found the way git does (the nearest `.git`), in Python.

    Asking git (`rev-parse --show-toplevel`) would read `core.worktree` from the config the
    implementer can write, and so could answer with a decoy directory.
    """
    start = path.resolve()
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return _location(folder, dot)
        if dot.is_file():
            try:
                line = _one_line(dot)
            except (OSError, UnicodeDecodeError) as exc:
                raise BridgeError(f"{dot} is unreadable: {exc}") from exc
            if line.startswith("gitdir:"):
                pointed = folder / line[len("gitdir:") :].strip()
                try:
                    # A loop of links raises RuntimeError on Python 3.11, OSError later.
                    git_dir = pointed.resolve()
                except (OSError, RuntimeError) as exc:
                    raise BridgeError(
                        f"{dot} names {pointed}, which cannot be resolved: {exc}"
                    ) from exc
                return _location(folder, git_dir)
    raise BridgeError(f"{path} is not a git repository")


def _one_line(path: Path) -> str:
    # Read as a small regular file without waiting: swapped for a fifo or a huge file after
    # the look, it would hang or fill the memory of every hook.
    data = small(path, _DOT_GIT_MAX, follow=True)
    if data is None:
        raise OSError("not a small regular file")
    return data.decode("utf-8").strip()


def _location(work_tree: Path, git_dir: Path) -> Location:
    common = git_dir
    pointer = git_dir / "commondir"
    if pointer.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError, RuntimeError):
            common = (git_dir / _one_line(pointer)).resolve()
    return Location(work_tree, git_dir, common)


def child_env(
    *, index_file: str | None = None, config: Sequence[tuple[str, str]] = ()
) -> dict[str, str]:
    """The whole environment of a git child: no secret of the bridge, no config outside.

    `config`: more overrides, passed as GIT_CONFIG_KEY_n/VALUE_n (2.31), which keep key and
    value apart: a driver named `a=b` cannot be overridden with `-c`.
    """
    binary_dir = str(Path(git_binary()).parent)
    env = {k: os.environ[k] for k in _KEPT if k in os.environ}
    env.update(
        {
            "PATH": os.pathsep.join(dict.fromkeys((binary_dir, "/usr/bin", "/bin"))),
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",  # 1.x
            "GIT_CONFIG_GLOBAL": os.devnull,  # 2.32
            "GIT_ATTR_NOSYSTEM": "1",  # 1.6.x
            "GIT_NO_REPLACE_OBJECTS": "1",  # 1.6.x
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_EDITOR": ":",
            "GIT_TERMINAL_PROMPT": "0",  # 2.3
            "GIT_OPTIONAL_LOCKS": "0",  # 2.15: a status never rewrites the user's index
        }
    )
    if index_file is not None:
        env["GIT_INDEX_FILE"] = index_file
    if config:
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for n, (key, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{n}"] = key
            env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


def argv(where: Location, args: Sequence[str]) -> list[str]:
    """The full command line: binary, explicit repository, every override, then `args`."""
    repo = [f"--git-dir={where.git_dir}", f"--work-tree={where.work_tree}"]
    overrides = [arg for key, value in OVERRIDES for arg in ("-c", f"{key}={value}")]
    return [git_binary(), "--no-pager", "--no-replace-objects", *repo, *overrides, *args]


def identity(path: Path) -> dict[str, str]:
    """Who commits: user.name and user.email as the user's own git would find them.

    The runner reads no global config, so a commit made through it would have no name. These
    two values are read as data (`git config --get` runs no program), from every scope, and
    only where the environment does not already give them.
    """
    import subprocess  # for its exceptions; see _spawn

    where = locate(path)
    env = {"PATH": os.defpath, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}
    for name in ("HOME", "XDG_CONFIG_HOME"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    found: dict[str, str] = {}
    for key, names in (("user.name", _IDENTITY[0::2]), ("user.email", _IDENTITY[1::2])):
        try:
            code, out, _ = _spawn(
                _walled(
                    [git_binary(), f"--git-dir={where.git_dir}", "config", "--get", key], where
                ),
                where.work_tree,
                env,
                None,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        value = out.decode("utf-8", "replace").strip()
        if code == 0 and value:
            found.update({n: value for n in names if not os.environ.get(n)})
    return found


def run_bytes(
    path: Path | Location,
    *args: str,
    ok_codes: tuple[int, ...] = (0,),
    index_file: str | None = None,
    stdin: bytes | None = None,
    author: Mapping[str, str] | None = None,
    objects: Path | None = None,
    alternate: bool = True,
) -> bytes:
    """git's raw stdout; a one-line BridgeError when it fails. `path`: a path in a repository,
    or a repository named whole (the shadow history, shadow/, is a git directory of the
    bridge's own over the user's work tree, which `locate` would never find).

    `author`: GIT_AUTHOR_*/GIT_COMMITTER_* values for a commit (see `identity`); nothing else
    may be added to the child's environment this way.

    `objects`: an object store of the bridge's own (basestore.py), searched first, with the
    repository's store as its alternate (none when not `alternate`).
    """
    import subprocess  # for its exceptions; see _spawn

    where = path if isinstance(path, Location) else locate(path)
    blank = blanked(where.common_dir, where.git_dir, lambda: _filter_names(where))
    env = child_env(index_file=index_file, config=blank)
    env.update({k: v for k, v in (author or {}).items() if k.startswith(_IDENTITY)})
    if objects is not None:
        env["GIT_OBJECT_DIRECTORY"] = str(objects)
        if alternate:
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(where.common_dir / "objects")
    place = where.work_tree
    try:
        command = _walled(argv(where, args), where, args, index_file, objects)
        code, out, err = _spawn(command, place, env, stdin)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BridgeError(f"git {args[0]} failed in {place}: {exc}") from exc
    if code not in ok_codes:
        raise BridgeError(f"git {args[0]} failed in {place}: {_reason(err) or code}")
    return out


def _reason(err: bytes) -> str:
    """git's last line, or for a lock in the way the line that names the lock's file (its last
    line, "remove the file manually to continue", would not say which)."""
    lines = err.decode("utf-8", "replace").strip().splitlines()
    locked = [line for line in lines if ".lock'" in line and "File exists" in line]
    if locked:
        return f"{locked[-1].strip()} If no git runs there now, remove that file to go on."
    return lines[-1] if lines else ""


def _walled(
    command: list[str],
    where: Location,
    args: Sequence[str] = ("config",),
    index_file: str | None = None,
    objects: Path | None = None,
) -> list[str]:
    """`command` inside the supervisor's own sandbox (`sandbox/`), where this machine has one.
    `objects`, the bridge's own object store, is a git directory of the call's."""
    from ..sandbox import git_command
    from ..sandbox.outlive import bounded

    dirs = (str(where.git_dir), str(where.common_dir), *([str(objects)] if objects else []))
    walled = git_command(command, str(where.work_tree), dirs, args, index_file)
    return bounded(walled, GIT_TIMEOUT_S)


def _spawn(
    command: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None
) -> tuple[int, bytes, bytes]:
    """Run to the end, killed after GIT_TIMEOUT_S by a timer.

    Not `subprocess.run(timeout=...)`: with a timeout, its final wait polls with sleeps, which
    cost about a millisecond on every short git call; without one, the wait simply blocks.
    `subprocess`, `signal` and `threading` are imported here, by the calls that run git: a
    hook that reaches this module without running git (a guard stop) never loads them.
    """
    import signal
    import subprocess
    import threading

    expired = threading.Event()

    def kill() -> None:
        expired.set()
        with contextlib.suppress(OSError):
            # Under `timeout` (sandbox/outlive.py) the call leads a group of its own: the whole
            # group goes, or an unwalled git would run on after its `timeout` was killed.
            if os.name == "posix" and os.getpgid(proc.pid) == proc.pid:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()

    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    timer = threading.Timer(GIT_TIMEOUT_S, kill)
    timer.daemon = True
    timer.start()
    try:
        out, err = proc.communicate(stdin)
    finally:
        timer.cancel()
    if expired.is_set():
        raise subprocess.TimeoutExpired(command, GIT_TIMEOUT_S)
    return proc.returncode, out, err


def run_git(
    path: Path,
    *args: str,
    ok_codes: tuple[int, ...] = (0,),
    index_file: str | None = None,
    author: Mapping[str, str] | None = None,
    objects: Path | None = None,
) -> str:
    """git's stdout as text (invalid UTF-8 replaced); see run_bytes."""
    return run_bytes(
        path, *args, ok_codes=ok_codes, index_file=index_file, author=author, objects=objects
    ).decode("utf-8", "replace")


def _filter_names(where: Location) -> list[str]:
    import subprocess

    base = [git_binary(), f"--git-dir={where.git_dir}", "config", "-z", "--get-regexp"]
    try:
        proc = subprocess.run(
            _walled([*base, r"^filter\..*\.(clean|smudge|process|required)$"], where),
            cwd=where.work_tree,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BridgeError(f"git config failed in {where.work_tree}: {exc}") from exc
    if proc.returncode not in (0, 1):
        # An unreadable config: the call that follows fails on it too, with git's message.
        return []
    names: list[str] = []
    for record in proc.stdout.split(b"\0"):
        key = record.partition(b"\n")[0].decode("utf-8", "replace")
        if key.startswith("filter.") and key.count(".") >= 2:
            names.append(key[len("filter.") : key.rindex(".")])
    return list(dict.fromkeys(names))
