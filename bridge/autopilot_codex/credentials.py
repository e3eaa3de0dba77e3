"""The manager's stored login: its OpenAI key (and server, organization) in a file of the state
home that only the user can read, so the key need not live in the host's environment.

The state home is on the wall's list of paths an implementer may not read (`wall.py`), and
the file is the user's alone (folder 0700, file 0600). The bridge reads the key here first and
falls back to `OPENAI_API_KEY` in its environment. Standard library only; no I/O at import.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from . import surrogates
from .errors import BridgeError
from .fileio import atomic_write
from .paths import find_worktree, state_home

SECRET_DIR = "secret"
FILE_NAME = "credentials.json"
KEY_VAR = "OPENAI_API_KEY"


@dataclass(frozen=True)
class Credentials:
    api_key: str
    base_url: str = ""
    organization: str = ""


def path(home: Path | None = None) -> Path:
    return (home or state_home()) / SECRET_DIR / FILE_NAME


def load(home: Path | None = None) -> Credentials | None:
    """The stored login, or None when there is none (or it cannot be read as one)."""
    try:
        data = surrogates.loads(path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    key = _text(data.get("api_key")) if isinstance(data, dict) else ""
    if not key:
        return None
    return Credentials(
        api_key=key,
        base_url=_text(data.get("base_url")),
        organization=_text(data.get("organization")),
    )


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def check_key(key: str) -> str:
    """The key as stored: stripped, one line, no spaces (a header value cannot hold them)."""
    key = key.strip()
    if not key:
        raise BridgeError("no key given: nothing was stored")
    if any(c.isspace() for c in key) or not key.isprintable():
        raise BridgeError("the key holds spaces or control characters: nothing was stored")
    return key


def save(creds: Credentials, home: Path | None = None) -> Path:
    """Write the login atomically into a folder only the user can enter; returns the file."""
    target = path(home)
    folder = target.parent
    if (repo := find_worktree(folder)) is not None:
        # A key inside a repository can be committed, and the implementer works there.
        raise BridgeError(
            f"the state home {folder.parent} is inside the git repository {repo}: a key kept "
            "there could be committed. Set AUTOPILOT_CODEX_HOME to a folder outside it; "
            "nothing was stored"
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise BridgeError(f"{folder} is not a folder of yours: nothing was stored")
    folder.chmod(0o700)
    # Created 0600 before anything is written into it.
    atomic_write(target, json.dumps(asdict(creds), indent=2) + "\n")
    return target


def remove(home: Path | None = None) -> bool:
    """Delete the stored login; False when there was none."""
    try:
        path(home).unlink()
    except FileNotFoundError:
        return False
    return True


def api_key() -> str:
    """The key a manager call uses: the stored one, else the environment's, else ""."""
    if (stored := load()) is not None:
        return stored.api_key
    return os.environ.get(KEY_VAR, "").strip()


def has_key() -> bool:
    return bool(api_key())


def exposed() -> bool:
    """Is the key exported into the environment the host (and so the implementer) starts
    with? The bridge runs with the host's environment, so its own is the host's."""
    return bool(os.environ.get(KEY_VAR, "").strip())


def exposure_note() -> str:
    """What `plan` and `doctor` say when the key is in the environment."""
    return (
        f"{KEY_VAR} is exported in the environment the host starts with, so the implementer "
        "can read it (printenv, /proc) unless the wall hides it from its commands. Move it: "
        f"`autopilot-codex login --from-env`, then remove the export of {KEY_VAR} from your "
        "shell profile and restart the host; the wall's sandbox.credentials.envVars deny "
        "hides it from sandboxed commands meanwhile."
    )


_TOKEN = re.compile(r"sk-[A-Za-z0-9_\-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}")
# A private key's block is found header, then footer, in one pass: as one lazy pattern
# (`BEGIN...[\s\S]*?END...`) it read to the text's end from each header nothing closes, the
# square of a diff the implementer writes.
_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_KEY_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")


def redact(text: str) -> str:
    """Remove credentials from anything bound for the manager, the user's own key first."""
    stored = load()
    values = [os.environ.get(var, "") for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")]
    for value in [stored.api_key if stored else "", *values]:
        if len(value) >= 8:
            text = text.replace(value, "[REDACTED]")
    return _TOKEN.sub("[REDACTED]", _without_keys(text))


def _without_keys(text: str) -> str:
    """The text with each private key's block, header to the nearest footer, redacted."""
    pieces, at = [], 0
    while (begin := _KEY_BEGIN.search(text, at)) is not None:
        end = _KEY_END.search(text, begin.end())
        if end is None:
            break  # no later header is closed either
        pieces += [text[at : begin.start()], "[REDACTED]"]
        at = end.end()
    return "".join(pieces) + text[at:]
