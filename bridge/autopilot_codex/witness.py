"""Tamper evidence behind the rails: what the bridge last wrote, so a state, plan, ledger or
active marker that anything else wrote (edited, replaced, removed, truncated) is noticed at the
next hook.

The rails are a denylist, not a sandbox; this is how what slips past them is caught. The
witness holds the digests of the last two state writes (a crash between writing the witness
and the state leaves the older one on disk, and that must still pass), the plan's digest, the
last two active markers (the same crash window), where the ledger ended when the bridge last
looked (`ledger.Anchor`), and the text of the last state written, from which a loop stopped for
tampering is restored: the changed file is kept aside for the user, never trusted.

The witness is sealed with a keyed digest (HMAC-SHA256, `witness_key`): a witness rewritten
together with the state, without the key, does not verify. A witness that is missing or does
not verify, for a state the bridge wrote, is tampering; it is never read as "no witness".
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path

from . import surrogates
from .fileio import regular_text
from .ledger import Anchor

# The witness format this module writes; a witness without it is from an older release.
VERSION = 2
# The digest recorded for "no active marker".
ABSENT = ""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def seal(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


class Damaged(Exception):
    """A witness file that is there but cannot be trusted (unreadable, forged, old format)."""


@dataclass(frozen=True)
class Witness:
    states: tuple[str, ...] = ()
    plan: str = ""
    last: str = ""
    # Digests of the active markers the bridge last wrote (ABSENT: none); empty: not checked.
    markers: tuple[str, ...] = ()
    ledger: Anchor = Anchor()
    # Where the ledger's verified history begins: 0 for a loop born here, the end of what an
    # older release (or a loop whose evidence was lost) left, for one taken over.
    origin: Anchor = Anchor()
    # When a loop from before the keyed witness was taken over ("" for a loop born keyed).
    adopted: str = ""
    # One more at every write. Each ledger line names the serial its writer knew, so an older
    # witness put back (with the state it vouched for) is given away by the newer lines.
    serial: int = 0

    def vouches(self, text: str) -> bool:
        return digest(text) in self.states

    def vouches_marker(self, text: str | None) -> bool:
        return not self.markers or _marker_digest(text) in self.markers

    def evolve(self, **changes: object) -> Witness:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def after(
        self, text: str, on_disk: str | None, *, marker: str | None, marker_on_disk: str | None
    ) -> Witness:
        """The witness of one more state write of `text` (and of `marker`, the active marker
        that goes with it) over the files on disk now.

        The files on disk stay vouched for until the writes land (a writer killed in between
        leaves them there); they are carried over only if this witness vouched for them
        already, so a changed file is never laundered by the next save.
        """
        keep = digest(on_disk) if on_disk is not None and self.vouches(on_disk) else None
        recent = (keep, digest(text)) if keep else (digest(text),)
        new_marker = _marker_digest(marker)
        old_marker = _marker_digest(marker_on_disk)
        markers: tuple[str, ...] = (new_marker,)
        if old_marker != new_marker and self.markers and old_marker in self.markers:
            markers = (old_marker, new_marker)
        return self.evolve(states=recent, last=text, markers=markers)

    def to_json(self, key: bytes) -> str:
        body = _body(self)
        data = {**body, "mac": seal(key, _canonical(body))}
        text = json.dumps(data, ensure_ascii=False, allow_nan=False) + "\n"
        _remember(key, text, self)
        return text


# The witness texts this process sealed or verified, by key and exact text: a hook reads its
# witness up to three times (load, save, the ledger's anchor), and a text seen before needs
# neither parsing nor its seal checked again. The text is still read from disk each time.
_KNOWN: dict[tuple[bytes, str], Witness] = {}
_KEEP = 4


def _remember(key: bytes, text: str, seen: Witness) -> None:
    while len(_KNOWN) >= _KEEP:
        del _KNOWN[next(iter(_KNOWN))]
    _KNOWN[(key, text)] = seen


def _marker_digest(text: str | None) -> str:
    return ABSENT if text is None else digest(text)


def _body(seen: Witness) -> dict[str, object]:
    return {
        "version": VERSION,
        "states": list(seen.states),
        "plan": seen.plan,
        "last": seen.last,
        "markers": list(seen.markers),
        "ledger": {"size": seen.ledger.size, "mac": seen.ledger.mac},
        "origin": {"size": seen.origin.size, "mac": seen.origin.mac},
        "adopted": seen.adopted,
        "serial": seen.serial,
    }


def _canonical(body: dict[str, object]) -> str:
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def read(path: Path, key: bytes) -> Witness | None:
    """The witness, None when there is no file; raises Damaged when it cannot be trusted."""
    try:
        text = regular_text(path)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise Damaged(f"witness.json is unreadable ({type(exc).__name__})") from exc
    known = _KNOWN.get((key, text))
    if known is not None:
        return known
    try:
        data = surrogates.loads(text)
    except ValueError as exc:
        raise Damaged("witness.json is not valid JSON") from exc
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise Damaged("witness.json is not a witness this version wrote")
    mac = data.pop("mac", None)
    # `compare_digest` takes ASCII text only: any other seal is a forgery, not a crash.
    if not isinstance(mac, str) or not mac.isascii():
        raise Damaged("witness.json does not carry the bridge's seal")
    if not hmac.compare_digest(mac, seal(key, _canonical(data))):
        raise Damaged("witness.json does not carry the bridge's seal")
    try:
        ledger, origin = data["ledger"], data["origin"]
        seen = Witness(
            states=tuple(_strings(data["states"])),
            plan=str(data["plan"]),
            last=str(data["last"]),
            markers=tuple(_strings(data["markers"])),
            ledger=Anchor(int(ledger["size"]), str(ledger["mac"])),
            origin=Anchor(int(origin["size"]), str(origin["mac"])),
            adopted=str(data["adopted"]),
            serial=int(data["serial"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        # Sealed but malformed: only a bug of ours could write it; still never trusted.
        raise Damaged(f"witness.json is malformed ({type(exc).__name__})") from exc
    _remember(key, text, seen)
    return seen


def _strings(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise TypeError("not a list of strings")
    return value
