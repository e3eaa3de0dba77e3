"""The one error type a user is meant to read."""

from __future__ import annotations


class BridgeError(RuntimeError):
    """A problem the user can act on; its message is shown as one line."""


class UsageError(BridgeError):
    """A command given in a way it cannot run (exit 2, as argparse's own refusals)."""


class LockTimeout(BridgeError):
    """Another hook held the loop's lock for longer than the bounded wait."""


class StateCorrupt(BridgeError):
    """`state.json` could not be read; it has been moved aside."""


def permission_denied(path: object) -> str:
    """One line for a file or directory we may not read or write: where, and the fix."""
    return (
        f"permission denied on {path}; nothing was changed or moved. Fix its permission "
        f"(e.g. `chmod -R u+rwX {path}`, as its owner) and run this again"
    )


def os_problem(exc: OSError) -> str | None:
    """One line for a file system refusal the user can fix (a read-only or foreign folder, a
    file where a folder belongs, or a folder where a file does), or None for anything else (a
    bug, shown as one)."""
    import errno

    path = exc.filename or "the state home"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return permission_denied(path)
    if exc.errno == errno.EROFS:
        return (
            f"cannot write to {path}: read-only file system; nothing was changed or moved. "
            "Run this where that folder is writable (not inside a sandbox), or set "
            "AUTOPILOT_CODEX_HOME to a folder you can write, and run this again"
        )
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return (
            f"cannot create {path}: a file stands where a folder belongs in that path; move the "
            "file, or set AUTOPILOT_CODEX_HOME to another folder, and run this again"
        )
    if exc.errno == errno.EISDIR:
        # A rename onto a folder names the folder second: that is the path to fix.
        where = exc.filename2 or path
        return (
            f"cannot write {where}: a folder stands where a file belongs; move the folder, or "
            "set AUTOPILOT_CODEX_HOME to another folder, and run this again"
        )
    if exc.errno == errno.ENOSPC:
        return f"no space left for {path}; free some and run this again"
    return None
