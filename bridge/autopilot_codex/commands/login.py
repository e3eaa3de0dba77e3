"""`login` / `logout`: keep the manager's OpenAI key in the state home instead of the host's
environment (see `credentials`). The key is never printed."""

from __future__ import annotations

import getpass
import os
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from .. import credentials
from ..credentials import Credentials
from ..errors import BridgeError, UsageError


def login(
    *,
    from_env: bool,
    from_stdin: bool,
    base_url: str | None,
    organization: str | None,
    env: Mapping[str, str] | None = None,
    prompt: Callable[[str], str] | None = None,
) -> str:
    environ = os.environ if env is None else env
    if from_env and from_stdin:
        raise BridgeError("take the key from the environment (--from-env) or stdin (-), not both")
    if from_env:
        key = environ.get(credentials.KEY_VAR, "")
        if not key.strip():
            raise BridgeError(f"--from-env: {credentials.KEY_VAR} is not set here")
        base_url = environ.get("OPENAI_BASE_URL", "") if base_url is None else base_url
        organization = environ.get("OPENAI_ORG_ID", "") if organization is None else organization
    elif from_stdin:
        key = sys.stdin.readline()
    else:
        key = (prompt or typed)("OpenAI API key (not shown): ")
    creds = Credentials(
        api_key=credentials.check_key(key),
        base_url=(base_url or "").strip(),
        organization=(organization or "").strip(),
    )
    where = credentials.save(creds)
    lines = [f"autopilot-codex: the manager's key is stored in {where} (readable by you only)."]
    if creds.base_url:
        lines.append(f"Server: {creds.base_url}")
    if credentials.exposed():
        lines.append(
            f"Now remove the export of {credentials.KEY_VAR} from your shell profile and restart "
            "Claude Code or Codex: the bridge reads the stored key, the implementer should not "
            "see one."
        )
    return "\n".join(lines)


def typed(question: str) -> str:
    """The key typed at the terminal: getpass reads it there without echo, so it never reaches
    the screen. With no terminal at all getpass would read the input instead, echo and all."""
    if not _terminal():
        raise UsageError(
            "login: there is no terminal to type the key in; give it on stdin "
            f"(`autopilot-codex login -`) or from {credentials.KEY_VAR} (`--from-env`)"
        )
    try:
        return getpass.getpass(question)
    except EOFError:  # Ctrl-D at the prompt
        raise UsageError("login: no key was typed; nothing was stored") from None


def _terminal() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return sys.stdin.isatty()
    return True


def login_status() -> str:
    where = credentials.path()
    stored = credentials.load()
    lines = []
    if stored is None:
        lines.append(f"autopilot-codex: no key stored (would be {where}).")
    else:
        lines.append(f"autopilot-codex: a key is stored in {where}{_mode_note(where)}.")
        if stored.base_url:
            lines.append(f"Server: {stored.base_url}")
        if stored.organization:
            lines.append(f"Organization: {stored.organization}")
    if credentials.exposed():
        lines.append(credentials.exposure_note())
    elif stored is None:
        lines.append("Store one with `autopilot-codex login` (or --from-env, or - for stdin).")
    return "\n".join(lines)


def _mode_note(where: Path) -> str:
    try:
        mode = stat.S_IMODE(where.stat().st_mode)
    except OSError:
        return ""
    if mode & 0o077:
        return f" (mode {mode:o}: others can read it; run `chmod 600 {where}`)"
    return " (mode 600)"


def logout() -> str:
    where = credentials.path()
    if credentials.remove():
        return f"autopilot-codex: removed the stored key ({where})."
    return f"autopilot-codex: no key was stored ({where})."
