"""The Linux sandbox: the system's bubblewrap, with the rules as mounts and namespaces.

The binary is found like git (`gitbinary.py`): a root-owned file in a system place, never
one from a PATH the implementer could have planted. The whole filesystem is bound read-only
(`--ro-bind / /`) and the rules' few mounts are laid over it: one bind of the root costs less
than binding each allowed folder. Namespaces: no network (unless the rules allow it), a pid
namespace with its own `/proc` (so no other process's environment can be read from it), a
private `/dev` and IPC; the sandbox dies with the bridge.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..gitbinary import system_program
from .rules import Mount, Rules, mounts

PLACES = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
# An empty device stands in for a hidden file: mounted without device access (bubblewrap's
# binds are `nodev`), it cannot even be opened.
_BLANK = "/dev/null"


def find(places: Sequence[str] = PLACES) -> str | None:
    """The first trusted bubblewrap, or None."""
    return system_program(tuple(places))


def argv(
    binary: str, rules: Rules, cwd: str, command: Sequence[str], *, new_session: bool = True
) -> list[str]:
    """`command` under bubblewrap. `new_session`: off when the caller already gave the sandbox
    a session of its own and must signal its whole process group (checks)."""
    head = [binary, "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    if not rules.network:
        head.append("--unshare-net")
    if new_session:
        head.append("--new-session")
    head += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    planned = mounts(rules)
    head += [flag for mount in planned for flag in _flags(mount)]
    # A hidden folder is an empty tmpfs, made read-only once everything inside it is mounted
    # (a mount point cannot be made in a read-only one): nothing is written there unseen.
    for mount in planned:
        if mount.kind == "hide" and mount.folder:
            head += ["--remount-ro", mount.path]
    head += [arg for name, value in rules.env for arg in ("--setenv", name, value)]
    return [*head, "--chdir", cwd, "--", *command]


def _flags(mount: Mount) -> list[str]:
    if mount.kind == "fresh" or (mount.kind == "hide" and mount.folder):
        return ["--tmpfs", mount.path]
    if mount.kind == "hide":
        return ["--ro-bind", _BLANK, mount.path]
    if mount.kind == "write":
        return ["--bind", mount.source or mount.path, mount.path]
    return ["--ro-bind", mount.path, mount.path]
