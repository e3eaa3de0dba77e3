"""`install`'s guarded default (issue 33): the wall in the user's Claude Code settings and the
manager's key out of the implementer's environment, unless the user says `--unguarded`.

Where the sandbox cannot start (no bubblewrap or socat), nothing is written: the boundary asks
Claude Code to refuse commands it cannot sandbox (`failIfUnavailable`), which would stop every
session's shell. `install` then names the one command that fixes it, and loops say UNGUARDED.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from .. import credentials
from ..errors import BridgeError
from ..paths import find_worktree
from ..wall import sandbox_usable
from .wall_install import consent, user_wall

LOGIN = "autopilot-codex login --from-env"


def guard_lines(host: str, cwd: str, environ: Mapping[str, str], *, unguarded: bool) -> list[str]:
    """What `install` did about the wall and the key, one paragraph each (ends blank)."""
    if unguarded:
        with contextlib.suppress(FileNotFoundError):
            consent().unlink()
        return [
            "Unguarded, as asked: your Claude Code settings were left as they were, and loops "
            "run with the rails only (UNGUARDED). `autopilot-codex install` sets up the wall.",
            "",
        ]
    consent().parent.mkdir(parents=True, exist_ok=True)
    consent().write_text(f"{host}\n", encoding="utf-8")
    return [*_wall(host, cwd, environ), "", *_key(environ), ""]


def _wall(host: str, cwd: str, environ: Mapping[str, str]) -> list[str]:
    usable, prereqs = sandbox_usable(True)
    if not usable:
        tools = ", ".join(prereqs.missing) or "a sandbox"
        fix = f"`{prereqs.fix}`, then `autopilot-codex install` again" if prereqs.fix else ""
        return [
            f"The wall was not written: its sandbox needs {tools}, missing here. "
            + (f"Fix: {fix}. " if fix else "")
            + "Until then loops run UNGUARDED (the rails only)."
        ]
    try:
        lines = user_wall(host, find_worktree(cwd), environ)
    except BridgeError as exc:
        return [f"The wall was not written: {exc}"]
    return [*lines, REACH]


# Said at every install: the user's settings hold every session, not only a loop's.
REACH = (
    "The wall holds every Claude Code session of yours, loop or not: Bash runs in the sandbox, "
    "writes the current repository only and reaches only the hosts in `wall_allow_hosts` "
    "(config.json; a push needs its remote's host there). The backup named above, if any, "
    "gives your settings back."
)


def _key(environ: Mapping[str, str]) -> list[str]:
    """The manager's key stored where the bridge reads it and the wall hides it, taken from the
    environment `install` runs in when it is exported there (as `login --from-env` does)."""
    exported = bool(environ.get(credentials.KEY_VAR, "").strip())
    if credentials.load() is not None:
        if not exported:
            return [f"The manager's key is stored in {credentials.path()}."]
        return [f"The manager's key is stored in {credentials.path()}; " + _unexport()]
    if not exported:
        return [
            "No manager's key yet: run `autopilot-codex login` (it asks for the key without "
            f"echo), or export {credentials.KEY_VAR} and run `{LOGIN}`."
        ]
    from .login import login

    try:
        login(from_env=True, from_stdin=False, base_url=None, organization=None, env=environ)
    except (BridgeError, OSError) as exc:
        return [f"The key was not stored ({exc}): run `{LOGIN}` yourself."]
    return [
        f"Stored the manager's key from {credentials.KEY_VAR} in {credentials.path()}; "
        + _unexport()
    ]


def _unexport() -> str:
    return (
        f"now remove the export of {credentials.KEY_VAR} from your shell profile and restart "
        "Claude Code: the bridge reads the stored key, and the implementer should not see one "
        "(the wall hides the variable from its commands meanwhile)."
    )
