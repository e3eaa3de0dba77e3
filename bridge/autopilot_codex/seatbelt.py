"""How an unguarded loop says so: the note every rails denial and Stop banner carries when the
loop started without a working wall (`guarded`). No imports: the hook path uses it."""

from __future__ import annotations


def unguarded(wall: str) -> bool:
    """A recorded level short of "on"; "" (a loop from before levels were recorded) is not
    judged."""
    return wall in ("off", "partly")


def seatbelt_note(wall: str) -> str:
    return "UNGUARDED: the rails are a seatbelt, not a wall" if unguarded(wall) else ""


def with_seatbelt(message: str, wall: str) -> str:
    """A banner or denial of an unguarded loop, saying so."""
    note = seatbelt_note(wall)
    return f"{message} · {note}" if note and message else message
