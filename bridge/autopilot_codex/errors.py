"""The one error type a user is meant to read."""

from __future__ import annotations


class BridgeError(RuntimeError):
    """A problem the user can act on; its message is shown as one line."""


class LockTimeout(BridgeError):
    """Another hook held the loop's lock for longer than the bounded wait."""


class StateCorrupt(BridgeError):
    """`state.json` could not be read; it has been moved aside."""
