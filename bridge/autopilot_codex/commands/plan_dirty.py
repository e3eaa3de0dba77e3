"""`plan` in a work tree with uncommitted work: said before anything is spent, and the user's
choice applied (issue 27, item 10).

The loop's base is HEAD; the manager reviews everything that differs from it, so edits and
untracked files already there become part of the review and may be told to be reverted. By
default they are included and the plan says so; `--include-dirty` includes them knowingly
(no warning); `--stash` starts from HEAD with the work kept aside in a git stash.
"""

from __future__ import annotations

from pathlib import Path

from .. import gitrepo

# Paths shown by name in the warning; the rest are counted.
SHOWN = 5
STASH_MESSAGE = "autopilot-codex: work kept aside before plan"


def uncommitted(worktree: Path) -> list[str]:
    """Changed, staged and untracked paths (ignored files are not work)."""
    args = ("--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all")
    out = gitrepo.run_git(worktree, "status", *args)
    paths: list[str] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":
            next(entries, None)  # a rename's source follows it
    return paths


def give_back(worktree: Path) -> str:
    """Put the work `settle` kept aside back, after a plan that failed; what to tell the user."""
    from ..errors import BridgeError

    top = gitrepo.run_git(worktree, "stash", "list", "-n", "1", "--format=%s")
    if STASH_MESSAGE not in top:
        return f'Your uncommitted work is in git stash ("{STASH_MESSAGE}"): `git stash pop`.'
    try:
        # Quiet: otherwise stash runs `git status`, which a `.gitmodules` can send into a
        # submodule whatever `diff.ignoreSubmodules` says.
        gitrepo.run_git(worktree, "stash", "pop", "-q", "--index")
    except BridgeError:
        return (
            f'Your uncommitted work is still in git stash ("{STASH_MESSAGE}"): it did not '
            "apply cleanly; `git stash pop` when the tree allows."
        )
    return "The uncommitted work kept aside for it was given back (git stash pop)."


def settle(worktree: Path, choice: str | None) -> list[str]:
    """Apply the choice for uncommitted work before the plan; the lines that say what was done."""
    paths = uncommitted(worktree)
    if not paths:
        return []
    named = ", ".join(paths[:SHOWN]) + (
        f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else ""
    )
    if choice == "stash":
        # Nested repositories and submodules left out by path: stash would otherwise run a
        # status inside each, under their own config, whatever `diff.ignoreSubmodules` says.
        inner = [f":(exclude,literal){r.path}" for r in gitrepo.nested.find(worktree)]
        args = ("push", "--include-untracked", "-m", STASH_MESSAGE, "--", ".", *inner)
        gitrepo.run_git(worktree, "stash", *args)
        return [
            f'Uncommitted work ({named}) was kept aside with git stash ("{STASH_MESSAGE}"); '
            "the loop starts from HEAD. `git stash pop` brings it back once the loop is done."
        ]
    if choice == "include":
        return [f"Uncommitted work included in the loop's review: {named}."]
    return [
        f"Note: uncommitted work here ({named}) is part of what the manager reviews, and it may "
        "tell the implementer to revert it. To start from HEAD with it kept aside, stop this "
        "loop and plan again with --stash; --include-dirty includes it without this note."
    ]
