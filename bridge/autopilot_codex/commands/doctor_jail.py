"""The supervisor's own sandbox, as `doctor` shows it and as `run`, `plan` and `ralph` say it
when it is missing: the bridge's and the driver's git and the user's checks then run as the
user, with the key file, the credential stores and the network in reach of anything they run."""

from __future__ import annotations

from .. import sandbox


def jail_line() -> tuple[str, bool]:
    """(text, a fact rather than a pass) for doctor."""
    known = sandbox.wall()
    if known.ok:
        return f"supervisor's sandbox: on, its own git and checks run in {known.binary}", False
    return f"supervisor's sandbox: off, {known.note()}", True


def jail_notes() -> list[str]:
    """The line a command prints where the sandbox is missing; none where it is up."""
    note = sandbox.note()
    return [f"Supervisor: {note}"] if note else []
