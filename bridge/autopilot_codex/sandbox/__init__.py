"""The supervisor's own sandbox: every git and check process the bridge or the rounds driver
starts over the work tree runs walled in, so that a route nobody has found yet (a program the
implementer got git or a check to run) finds no key, no credential, no network and nothing
writable but what that call must write.

Linux: the system's bubblewrap (`bwrap.py`); macOS: Seatbelt (`seatbelt.py`); both from the
same rules (`rules.py`): what a git call may touch (`gitcall.py`), what a check may
(`checkcall.py`) and where its tools' caches go (`caches.py`), what nothing may read
(`places.py`). Where neither works (`jail.py` asks once per process), the calls run as before
and `doctor`, `run`, `plan` and `ralph` say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from . import checkcall, gitcall
from .jail import Wall, wall, wrap

__all__ = ["Wall", "check_command", "git_command", "note", "wall"]


def git_command(
    command: Sequence[str],
    work_tree: str,
    git_dirs: Sequence[str],
    args: Sequence[str],
    index_file: str | None = None,
) -> list[str]:
    """The git `command` (whose git arguments after the binary's own are `args`) walled in."""
    known = wall()
    if not known.ok:
        return list(command)
    rules = gitcall.rules(command[0], work_tree, git_dirs, args, index_file)
    return wrap(known, rules, work_tree, command)


def check_command(
    command: Sequence[str], cwd: str, env: Mapping[str, str], *, network: bool = False
) -> list[str]:
    """A check's `command` walled in; it keeps the process group its caller gives it."""
    known = wall()
    if not known.ok:
        return list(command)
    rules = checkcall.rules(cwd, env, network=network)
    return wrap(known, rules, cwd, command, new_session=False)


def note() -> str:
    """What the user reads when the supervisor's own calls run unwalled; "" when walled."""
    return wall().note()
