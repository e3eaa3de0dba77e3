"""The secret that seals every witness and ledger line: `<state home>/secret/witness.key`,
readable by the user only (0600 in a 0700 folder), made on first use.

The implementer's tools are told not to read the state home (the `state` rail); the wall issue
makes it unreadable to them. Whoever holds the key can forge evidence, so it never leaves this
file: not in the environment, not in a prompt, not in the ledger.

Migration: the loops on disk when the key is made were written by a release without it. Their
state's (and plan's) digest is recorded in the key file then, and exactly those texts are taken
over without a keyed witness (`adoptable`). Any other state without a keyed witness, written
later, is tampering.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from . import surrogates
from .errors import BridgeError
from .witness import digest

KEY_BYTES = 32


class Key:
    # A plain class: a dataclass costs every hook its generated code.
    __slots__ = ("legacy", "secret")

    def __init__(self, secret: bytes, legacy: dict[str, dict[str, str]]) -> None:
        self.secret = secret
        # project key -> {"state": digest, "plan": digest}: the loops that predate the key.
        self.legacy = legacy

    def adoptable(self, project: str, state_text: str) -> dict[str, str] | None:
        entry = self.legacy.get(project)
        if entry is None or entry.get("state") != digest(state_text):
            return None
        return entry


_CACHE: dict[str, Key] = {}


def key_path(home: Path) -> Path:
    return home / "secret" / "witness.key"


def load(home: Path) -> Key:
    """The key of this state home, made (with the record of the older loops) when missing."""
    path = key_path(home)
    cached = _CACHE.get(str(path))
    if cached is not None and path.exists():
        return cached
    try:
        key = _read(path)
    except FileNotFoundError:
        key = _create(home, path)
    _CACHE[str(path)] = key
    return key


def _read(path: Path) -> Key:
    try:
        data = surrogates.loads(path.read_text(encoding="utf-8"))
        secret = bytes.fromhex(data["key"])
        legacy = data.get("legacy", {})
        if len(secret) != KEY_BYTES or not isinstance(legacy, dict):
            raise ValueError("malformed")
    except FileNotFoundError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # Never made afresh: a new key would take every loop on disk for an old one.
        raise BridgeError(
            f"{path} is damaged ({type(exc).__name__}); it seals every loop's evidence, so "
            "nothing is trusted without it. Stop the loops, remove the state home's "
            "`projects` folder and the key, and plan again"
        ) from exc
    return Key(secret, {str(k): dict(v) for k, v in legacy.items() if isinstance(v, dict)})


def _create(home: Path, path: Path) -> Key:
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        path.parent.chmod(0o700)
    key = Key(os.urandom(KEY_BYTES), _legacy_loops(home))
    text = json.dumps({"key": key.secret.hex(), "legacy": key.legacy}) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            # link, not rename: of two processes making the key at once, one wins, and the
            # other takes the winner's key.
            os.link(tmp, path)
        except FileExistsError:
            return _read(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return key


def _legacy_loops(home: Path) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    with contextlib.suppress(OSError):
        for folder in (home / "projects").iterdir():
            try:
                state = (folder / "state.json").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if _keyed(folder / "witness.json"):
                # Sealed by a key that is gone: the key was removed, so these loops are
                # not old ones; their witness no longer verifies, and that is the evidence.
                continue
            try:
                plan = digest((folder / "plan.json").read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                plan = ""
            found[folder.name] = {"state": digest(state), "plan": plan}
    return found


def _keyed(path: Path) -> bool:
    try:
        data = surrogates.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "mac" in data
