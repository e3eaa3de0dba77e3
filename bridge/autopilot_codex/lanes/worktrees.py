"""The lanes' branches and worktrees: made from the integration head, found again on resume,
removed only when nothing in them would be lost, and the user's branch moved only forward.

Every git call goes through the walled runner (`gitrepo.runner`). A lane's worktree is made
by the bridge itself rather than by `git worktree add`: the wall seals the repository's
`worktrees/` folder against every git call (what git reads there decides what it runs), so the
few files that register a worktree are written here, and git only fills the index and the
files (`read-tree`, `checkout-index`: no hook, no filter the config does not define, and every
filter it defines blanked by the runner).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from ..errors import BridgeError
from ..gitrepo import Location, locate, run_bytes
from ..paths import state_home
from .names import component, original

# update-ref's "old value" that means "must not exist yet", whatever the hash's length.
_ABSENT = ""
# The suffix of a worktree being filled (a dot: no escaped name has one).
PART = ".part"


def integration_branch(run: str) -> str:
    return f"autopilot/{component(run)}/integration"


def lane_branch(run: str, task_id: str) -> str:
    return f"{_lanes_prefix(run)}{component(task_id)}"


def lanes_root(home: Path) -> Path:
    """The folder beside the state home `home` that holds every repository's lane worktrees."""
    home = home.expanduser().absolute()
    return home.parent / f"{home.name}-lanes"


def lanes_home(repo: Path) -> Path:
    """Where this repository's lane worktrees live: `<state home>-lanes/<repo>-<hash>/`.

    Beside the state home, not in it: the wall denies the implementer the state home, and a
    lane's implementer works in its folder. Not in the user's work tree either: a lane folder
    there would show in the user's `git status` and in every other lane's checks. The hash of
    the repository's git directory keeps two repositories of one name apart.
    """
    common = locate(repo).common_dir
    digest = hashlib.sha256(str(common).encode()).hexdigest()[:12]
    # Named after the repository's folder, also when asked from inside one of its lanes.
    name = component((common.parent.name if common.name == ".git" else common.stem) or "root")
    return lanes_root(state_home()) / f"{name}-{digest}"


def begin(repo: Path, run: str) -> str:
    """The integration branch's head; the branch is made at HEAD when missing."""
    ref = _ref(integration_branch(run))
    found = commit_sha(repo, ref)
    if found:
        return found
    head = commit_sha(repo, "HEAD")
    if not head:
        raise BridgeError("lanes need a commit to start from: this repository has none")
    _move(repo, ref, head, _ABSENT)
    return head


def add(repo: Path, run: str, task_id: str, *, new: bool = False) -> Path:
    """The lane's worktree, on its branch made from the integration head; an existing branch
    and worktree are used as they are (a resumed run continues them).

    `new`: the driver's record says this task never started, so a branch already there was
    not made by this run's driver (another lane's implementer can write refs): an error,
    rather than work nobody asked for taken as the lane's start.
    """
    ref = _ref(lane_branch(run, task_id))
    if new and commit_sha(repo, ref):
        raise BridgeError(f"{lane_branch(run, task_id)} exists, yet its task never started")
    if not commit_sha(repo, ref):
        base = commit_sha(repo, _ref(integration_branch(run)))
        if not base:
            raise BridgeError(f"run {run!r} has no integration branch: call begin first")
        _move(repo, ref, base, _ABSENT)
    place = lane_path(repo, run, task_id)
    if place.is_symlink():
        raise BridgeError(f"{place} is a link, not a lane's folder: remove it to go on")
    admin = locate(repo).common_dir / "worktrees" / _admin_name(run, task_id)
    if (place / ".git").exists():
        _relink(place, admin)
        return place
    if not place.exists() and admin.is_dir():
        # The folder went (a cleaner, a disk move) and left git's record of it: the branch
        # holds the commits, so the record is stale and the worktree is made again.
        shutil.rmtree(admin)
    attach(repo, place, f"ref: {ref}", _admin_name(run, task_id))
    return place


def _relink(place: Path, admin: Path) -> None:
    """The lane's link to git written again as `attach` wrote it: a lane's implementer can
    write its worktree, and a link pointing at the user's repository (or another lane's) would
    have the resumed lane's commits made on that branch. A `.git` folder is left alone: its
    history is nobody's branch, and removing it could lose the commits in it."""
    link = place / ".git"
    text = f"gitdir: {admin}\n"
    if link.is_symlink() or (link.is_file() and link.read_text("utf-8", "replace") != text):
        link.unlink()
        link.write_text(text, encoding="utf-8")


def lane_path(repo: Path, run: str, task_id: str) -> Path:
    return lanes_home(repo) / component(run) / component(task_id)


def existing(repo: Path, run: str) -> dict[str, str]:
    """Task id -> lane branch head, for every lane branch of the run."""
    prefix = _ref(_lanes_prefix(run))
    out = _git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    found: dict[str, str] = {}
    for line in out.splitlines():
        name, _, sha = line.partition(" ")
        task = original(name[len(prefix) :])
        if task is not None:
            found[task] = sha
    return found


def merged(repo: Path, run: str, task_id: str) -> bool:
    """Whether the lane branch's head is in the integration branch (False without a branch)."""
    lane = commit_sha(repo, _ref(lane_branch(run, task_id)))
    return lane is not None and contains(repo, _ref(integration_branch(run)), lane)


def remove(repo: Path, run: str, task_id: str) -> bool:
    """Remove the lane's worktree and branch when everything in them is merged; otherwise
    touch nothing and return False. A worktree with changes not committed, or whose HEAD
    left the branch for commits not merged, is kept too."""
    ref = _ref(lane_branch(run, task_id))
    integration = _ref(integration_branch(run))
    lane = commit_sha(repo, ref)
    if lane is not None and not contains(repo, integration, lane):
        return False
    place = lane_path(repo, run, task_id)
    admin = locate(repo).common_dir / "worktrees" / _admin_name(run, task_id)
    if place.is_symlink():
        return False
    if place.exists():
        where = Location(place, admin, locate(repo).common_dir)
        if not (place / ".git").is_file() or not admin.is_dir():
            return False
        head = commit_sha(where, "HEAD")
        if head is None or not contains(repo, integration, head) or _dirty(where):
            return False
        if _nested(place):
            return False
        shutil.rmtree(place)
    if admin.exists():
        shutil.rmtree(admin)
    if lane is not None:
        _move(repo, ref, "", lane, delete=True)
    return True


def finish(
    repo: Path, run: str, user_branch: str, user_sha: str, expected: str | None = None
) -> str:
    """Fast-forward the user's branch to the integration head when it still points at
    `user_sha`; otherwise leave it. Returns what was done, as a sentence for the user.

    `expected`: the integration head as the queue's own record has it; given, a branch moved
    outside the queue (by whoever can write the refs) never reaches the user's branch.
    """
    integration = integration_branch(run)
    head = commit_sha(repo, _ref(integration))
    if head is None:
        raise BridgeError(f"run {run!r} has no integration branch")
    ref = _ref(user_branch)
    now = commit_sha(repo, ref)
    leave = f"The work is on branch {integration}; your branch {user_branch} was left as it was"
    if expected is not None and head != expected:
        return f"{leave}: {integration} is not where the merge queue left it; check it first."
    if now != user_sha:
        return f"{leave}: it moved since the run began. Merge {integration} when you are ready."
    if now == head:
        return f"Your branch {user_branch} already has the run's work ({head[:12]})."
    if not contains(repo, _ref(integration), now):
        return f"{leave}: it is not an ancestor of {integration}."
    checked_out = _checked_out(repo, ref)
    if checked_out is None:
        _move(repo, ref, head, now)
    else:
        try:
            _git(
                checked_out, "-c", "merge.autoStash=false", "-c", "gc.auto=0",
                "merge", "--ff-only", "--no-stat", "--no-edit", "--no-verify", head,
            )  # fmt: skip
        except BridgeError as exc:
            return f"{leave}: the fast-forward of its work tree failed ({exc})."
    return f"Your branch {user_branch} now has the run's work ({head[:12]}, from {integration})."


def attach(repo: Path, place: Path, head: str, name: str) -> Location:
    """A worktree at `place` registered under `name`, its HEAD `head` (`ref: <ref>` or a
    commit), its files checked out. Written as `git worktree add` writes it.

    Filled in `<place>.part` and renamed to `place` once whole, its link to git written last:
    a process killed half-way leaves no `place` for `add` to take as a lane to continue (a half
    filled tree would have its missing files committed as deleted), only a `.part` folder
    (a name `component` never makes) cleared by the next attempt.
    """
    common = locate(repo).common_dir
    admin = common / "worktrees" / name
    if place.exists() or admin.exists():
        raise BridgeError(f"{place} or its record {admin} is in the way of a new lane")
    part = partial(place)
    shutil.rmtree(part, ignore_errors=True)
    admin.mkdir(parents=True)
    part.mkdir(parents=True)
    (admin / "gitdir").write_text(f"{place / '.git'}\n", encoding="utf-8")
    (admin / "commondir").write_text("../..\n", encoding="utf-8")
    (admin / "HEAD").write_text(f"{head}\n", encoding="utf-8")
    try:
        _git(Location(part, admin, common), "read-tree", "HEAD")
        _git(Location(part, admin, common), "checkout-index", "--all", "--force", "-u")
    except BridgeError:
        detach(Location(part, admin, common))  # never found later as a lane to resume
        raise
    (part / ".git").write_text(f"gitdir: {admin}\n", encoding="utf-8")
    part.rename(place)
    return Location(place, admin, common)


def partial(place: Path) -> Path:
    """Where `attach` fills the worktree for `place` before it is whole."""
    return place.with_name(f"{place.name}{PART}")


def detach(where: Location) -> None:
    """Remove a worktree `attach` made, files and record."""
    shutil.rmtree(where.work_tree, ignore_errors=True)
    shutil.rmtree(where.git_dir, ignore_errors=True)


def move(repo: Path, ref: str, new: str, old: str) -> bool:
    """Compare-and-swap: `ref` to `new` only while it points at `old`. False when it did not."""
    try:
        _move(repo, ref, new, old)
    except BridgeError:
        return False
    return True


def _git(where: Path | Location, *args: str, ok_codes: tuple[int, ...] = (0,)) -> str:
    """The walled runner's text output, for a path or a worktree named whole."""
    return run_bytes(where, *args, ok_codes=ok_codes).decode("utf-8", "replace")


def _lanes_prefix(run: str) -> str:
    return f"autopilot/{component(run)}/task/"


def _admin_name(run: str, task_id: str) -> str:
    digest = hashlib.sha256(f"{run}\0{task_id}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"autopilot-lane-{digest[:20]}"


def _ref(branch: str) -> str:
    return f"refs/heads/{branch}"


def commit_sha(repo: Path | Location, rev: str) -> str | None:
    """The commit `rev` names, or None."""
    out = _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", ok_codes=(0, 1))
    return out.strip() or None


def _move(repo: Path, ref: str, new: str, old: str, *, delete: bool = False) -> None:
    if delete:
        _git(repo, "update-ref", "-d", ref, old)
    else:
        _git(repo, "update-ref", ref, new, old)


def contains(repo: Path, ref: str, sha: str) -> bool:
    """Whether commit `sha` is in `ref`'s history (False when either is missing)."""
    try:
        _git(repo, "merge-base", "--is-ancestor", sha, ref)
    except BridgeError:
        return False
    return True


def _dirty(where: Location) -> bool:
    out = _git(
        where, "status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=all"
    )
    return bool(out.strip("\0"))


def _nested(place: Path) -> bool:
    """Whether a repository sits inside the worktree (a gitlink the lane merged names its
    commits, or one it ignores): its commits live only there, and git's status, which never
    steps into it, calls the worktree clean. Links are not followed."""
    top = str(place)
    return any(folder != top and ".git" in (*dirs, *files) for folder, dirs, files in os.walk(top))


def _checked_out(repo: Path, ref: str) -> Path | None:
    """The work tree where `ref` is checked out, if any."""
    out = _git(repo, "worktree", "list", "--porcelain")
    place: Path | None = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            place = Path(line[len("worktree ") :])
        elif line == f"branch {ref}":
            return place
    return None
