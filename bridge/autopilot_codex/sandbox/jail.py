"""Whether this process can wall in what it starts, and the command line that does.

Asked once per process (a bubblewrap that cannot create namespaces, inside a container or
under a policy that forbids them, fails the same way every time) by running the sandbox with
fixed arguments: nothing the implementer wrote takes part in that answer, so no file it plants
can switch the wall off. Once the wall is known to work, a walled call that fails is a failed
call, never retried without the wall. There is no switch to turn it off (an environment
variable or a file would be one the implementer could reach); a test that needs the unwalled
path sets this module's answer itself.
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from . import bwrap, seatbelt
from .rules import Rules

PROBE_TIMEOUT_S = 20.0
NOTE = "the supervisor's own git and checks run unwalled"
USERNS_FIX = (
    "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or an "
    "AppArmor profile for bwrap on Ubuntu 24.04)"
)


@dataclass(frozen=True)
class Wall:
    """`binary` is the sandbox program when `ok`; otherwise `why` and `fix` say what is missing."""

    system: str
    ok: bool
    binary: str = ""
    why: str = ""
    fix: str = ""

    def note(self) -> str:
        """The line the user reads when the wall is missing; "" when it is up."""
        if self.ok:
            return ""
        fix = f"; fix: {self.fix}" if self.fix else ""
        return f"{NOTE} ({self.why}){fix}"


_known: Wall | None = None


def wall() -> Wall:
    global _known
    if _known is None:
        _known = probe()
    return _known


def probe(system: str | None = None) -> Wall:
    name = (system or platform.system()).lower()
    if name == "darwin":
        if not os.access(seatbelt.BINARY, os.X_OK):
            return Wall(name, False, why=f"{seatbelt.BINARY} is missing")
        return _tried(Wall(name, True, seatbelt.BINARY))
    if name != "linux":
        return Wall(name, False, why=f"no sandbox the supervisor can use on {name}")
    binary = bwrap.find()
    if binary is None:
        fix = "sudo apt-get install -y bubblewrap (or your system's bubblewrap package)"
        return Wall(name, False, why="bubblewrap is not installed in a system folder", fix=fix)
    return _tried(Wall(name, True, binary))


def _tried(candidate: Wall) -> Wall:
    """`candidate` when its sandbox runs a program with the rules every call uses."""
    # The kinds of mount every call uses: a private /tmp, a hidden folder made read-only.
    rules = Rules(fresh=("/tmp",), hidden=("/run",))
    linux = candidate.system == "linux"
    program = [candidate.binary, "--version"] if linux else ["/usr/bin/true"]
    command = wrap(candidate, rules, "/", program)
    try:
        proc = subprocess.run(
            command, capture_output=True, timeout=PROBE_TIMEOUT_S, env={}, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        detail = str(exc)
    else:
        if proc.returncode == 0:
            return candidate
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = lines[-1] if lines else f"exit {proc.returncode}"
    why = f"{candidate.binary} cannot start a sandbox here: {detail}"
    return Wall(candidate.system, False, why=why, fix=USERNS_FIX if linux else "")


def wrap(
    known: Wall, rules: Rules, cwd: str, command: Sequence[str], *, new_session: bool = True
) -> list[str]:
    """`command` inside the wall `known`, or as it is when there is none."""
    if not known.ok:
        return list(command)
    if known.system == "darwin":
        return seatbelt.argv(rules, cwd, command)
    return bwrap.argv(known.binary, rules, cwd, command, new_session=new_session)
