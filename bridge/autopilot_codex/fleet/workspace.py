"""A worker's own copy of a submitted repository, and the way its branches go back.

Two folders per run, both named `<executor id>/<fleet run id>`, so a worker restarted with the
same executor id finds them again and a recovered run resumes its lanes where they stood:

- the clone the lanes run in, in `<state home>-fleet/`: beside the state home, not in it, as the
  lanes' worktrees are (`lanes.worktrees.lanes_home`): the wall hides the state home from the
  implementer, and a lane's worktree keeps its git objects in the clone;
- what is the worker's alone, in `<state home>/fleet/`, out of the implementer's reach:
  `outbox.git` (a bare repository of the bridge's own), the drive's log and the run's own
  durable database.

Pushing never starts from the clone: the implementer works in the clone's worktrees and, unwalled,
could write its `.git/config` (a `pushurl`, an `insteadOf`, a helper), and a push from there would
follow it with the user's credentials. Nor does any git of the worker read the clone outside the
wall: its `autopilot/*` branches are read by the walled runner, copied into the outbox by value,
with the clone's objects borrowed as an alternate (data, never a program run there), and the
outbox (whose config only the bridge writes) pushes them to the URL the run was submitted with. A push is never forced: a branch the remote moved another way is named
in the result and left for the user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BridgeError
from ..gitbinary import git_binary
from ..gitrepo.runner import locate, run_git
from ..paths import state_home

FLEET_DIR = "fleet"
CLONE = "repo"
OUTBOX = "outbox.git"
PREFIX = "refs/heads/autopilot/"
# Whatever the config says, no hook or monitor of ours runs, no command-running transport.
HARDENED = (
    "-c", "core.hooksPath=" + os.devnull, "-c", "core.fsmonitor=false",
    "-c", "protocol.ext.allow=never", "-c", "submodule.recurse=false",
)  # fmt: skip
GIT_TIMEOUT_S = 600


@dataclass(frozen=True)
class Workspace:
    private: Path
    clone: Path


def of(executor_id: str, fleet_id: str, home: Path | None = None) -> Workspace:
    home = (home or state_home()).expanduser().absolute()
    rel = Path(safe_name(executor_id), safe_name(fleet_id))
    beside = home.parent / f"{home.name}-{FLEET_DIR}"
    return Workspace(private=home / FLEET_DIR / rel, clone=beside / rel / CLONE)


def safe_name(name: str) -> str:
    """`name` as one folder (or file) name: letters, digits, `-_.`; anything else `_`."""
    kept = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    if not kept:
        raise BridgeError(f"{name!r} cannot name a folder")
    return kept


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """The trusted git binary, hardened, with the user's own credentials (a clone and a push
    reach the user's remote as the user's git would)."""
    done = subprocess.run(
        [git_binary(), *HARDENED, *args],
        cwd=cwd,
        env={**(env or os.environ), "GIT_TERMINAL_PROMPT": "0"},
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise BridgeError(f"git {args[0]} failed: {detail[-1] if detail else done.returncode}")
    return done.stdout


def prepare(space: Workspace, repo_url: str, fleet_id: str, env: dict[str, str]) -> Path:
    """The clone, made once: a clone a kill cut short (no ready mark) is made again. A run
    another worker began (taken over) starts from the integration branch it pushed, so the
    work that machine merged is kept."""
    ready = space.private / ".fleet-ready"
    if ready.exists():
        return space.clone
    space.private.mkdir(mode=0o700, parents=True, exist_ok=True)
    space.clone.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.rmtree(space.clone, ignore_errors=True)
    shutil.rmtree(space.private / OUTBOX, ignore_errors=True)
    git("clone", "--quiet", "--no-recurse-submodules", repo_url, str(space.clone), env=env)
    pushed = f"{PREFIX}{fleet_id}/integration"
    if git("ls-remote", repo_url, pushed, env=env).strip():
        git("fetch", "--quiet", "--no-tags", repo_url, pushed, cwd=space.clone, env=env)
        git("reset", "--quiet", "--hard", "FETCH_HEAD", cwd=space.clone, env=env)
    git("init", "--quiet", "--bare", str(space.private / OUTBOX), env=env)
    ready.write_text(repo_url + "\n")
    return space.clone


def push(space: Workspace, repo_url: str, fleet_id: str, env: dict[str, str]) -> dict[str, str]:
    """Every `autopilot/<run>/…` branch of the clone to `autopilot/<fleet id>/…` on the remote:
    {remote branch: "pushed" | "up to date" | why it was refused}."""
    outbox = space.private / OUTBOX
    heads = _autopilot_heads(space.clone)
    if not heads:
        return {}
    # The clone's objects are borrowed as data (an alternate), its refs copied by value: no git
    # of the worker's ever runs in the clone, whose config the implementer can write, outside
    # the wall (a fetch from it would start an upload-pack there, with the worker's secrets).
    objects = locate(space.clone).common_dir / "objects"
    (outbox / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
    for ref, sha in heads.items():
        git("--git-dir", str(outbox), "update-ref", ref, sha, env=env)
    specs = {ref: _remote_name(ref, fleet_id) for ref in heads}
    done = subprocess.run(
        [git_binary(), *HARDENED, "--git-dir", str(outbox), "push", "--porcelain", repo_url,
         *(f"{ref}:{remote}" for ref, remote in specs.items())],
        env={**env, "GIT_TERMINAL_PROMPT": "0"}, capture_output=True, text=True,
        timeout=GIT_TIMEOUT_S, check=False,
    )  # fmt: skip
    return _outcomes(done.stdout, specs.values(), done.stderr)


def _autopilot_heads(clone: Path) -> dict[str, str]:
    """The clone's `autopilot/…` branches and their commits, read by the walled runner."""
    out = run_git(clone, "for-each-ref", "--format=%(refname) %(objectname)", PREFIX)
    found = (line.partition(" ") for line in out.splitlines())
    return {ref: sha for ref, _, sha in found if ref.startswith(PREFIX) and sha}


def _remote_name(ref: str, fleet_id: str) -> str:
    """`refs/heads/autopilot/<run>/<rest>` → `refs/heads/autopilot/<fleet id>/<rest>`: two runs
    begun in the same second on two workers never share a remote branch."""
    rest = ref[len(PREFIX) :].split("/", 1)
    return f"{PREFIX}{fleet_id}/{rest[1] if len(rest) == 2 else rest[0]}"


def _outcomes(porcelain: str, remotes: Iterable[str], stderr: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or ":" not in parts[1]:
            continue
        flag, remote = parts[0], parts[1].split(":", 1)[1].removeprefix("refs/heads/")
        summary = parts[2]
        found[remote] = {" ": "pushed", "*": "pushed", "=": "up to date", "+": "pushed"}.get(
            flag, f"refused ({parts[3] if len(parts) > 3 else summary})"
        )
    if not found and stderr.strip():
        last = stderr.strip().splitlines()[-1]
        return {r.removeprefix("refs/heads/"): f"not pushed ({last})" for r in remotes}
    return found
