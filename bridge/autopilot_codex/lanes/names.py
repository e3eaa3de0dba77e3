"""Task ids and run names as ref components and folder names: every id its own name, and no
name that leaves the lanes' namespace (`refs/heads/autopilot/<run>/`)."""

from __future__ import annotations

from ..errors import BridgeError

# Kept as they are; every other character (a dot, a slash, a space, an upper-case letter) is
# written `+xx`, its UTF-8 bytes in hex. `+` itself is escaped, so decoding is exact: two ids
# never share a name. Upper case is escaped because a file system that ignores case would
# make `T1` and `t1` one loose ref and one folder.
_KEPT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
# A ref component and a folder name must both fit (255 bytes on common file systems).
NAME_CHARS_MAX = 200


def component(text: str) -> str:
    """`text` as one safe ref component and folder name; BridgeError for an empty or too long
    one (the plan's check refuses both before they get here)."""
    if not text:
        raise BridgeError("a lane needs a non-empty name")
    out = "".join(ch if ch in _KEPT else _escape(ch) for ch in text)
    if len(out) > NAME_CHARS_MAX:
        raise BridgeError(f"the name {text[:40]!r}... is too long for a branch")
    return out


def fits(text: str, room: int = 0) -> bool:
    """Whether `component(text)` leaves `room` characters to spare under NAME_CHARS_MAX."""
    size = sum(1 if ch in _KEPT else len(_escape(ch)) for ch in text)
    return size <= NAME_CHARS_MAX - room


def original(name: str) -> str | None:
    """The text `component` made `name` from; None for a name it could not have made."""
    raw = bytearray()
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "+":
            pair = name[i + 1 : i + 3]
            if len(pair) != 2 or any(c not in "0123456789abcdef" for c in pair):
                return None
            raw.append(int(pair, 16))
            i += 3
        elif ch in _KEPT:
            raw += ch.encode()
            i += 1
        else:
            return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text and component(text) == name else None


def _escape(ch: str) -> str:
    return "".join(f"+{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
