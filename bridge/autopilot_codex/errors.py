"""The one error type a user is meant to read."""

from __future__ import annotations


class BridgeError(RuntimeError):
    """A problem the user can act on; its message is shown as one line."""


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
