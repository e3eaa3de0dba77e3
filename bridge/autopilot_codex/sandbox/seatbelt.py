"""The macOS sandbox: Seatbelt (`/usr/bin/sandbox-exec -p PROFILE`), the same rules as a profile.

Seatbelt cannot mount, so a hidden path is denied rather than replaced, a bound folder is
writable where it is (not at its place, which stays read-only: the rules' variables point the
tools there), and a fresh folder is only a writable one (macOS gives each user a private temporary folder already). In a profile
the last matching rule wins: the rules are written in the same order as Linux's mounts, so the
deeper path wins here too. Not run by the test suite (it runs on Linux): the profile text is
tested as text.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rules import Mount, Rules, mounts

BINARY = "/usr/bin/sandbox-exec"
# Devices every program expects to write.
_DEVICES = ('(literal "/dev/null")', '(literal "/dev/zero")', '(regex #"^/dev/fd/")')


def profile(rules: Rules) -> str:
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    lines.append(f"(allow file-write* {' '.join(_DEVICES)})")
    if not rules.network:
        lines.append("(deny network*)")
    lines += [_rule(mount) for mount in mounts(rules)]
    return "\n".join(lines) + "\n"


def _rule(mount: Mount) -> str:
    path = mount.source or mount.path
    where = f"({'subpath' if mount.folder else 'literal'} {_quoted(path)})"
    if mount.kind in ("fresh", "write"):
        return f"(allow file-read* file-write* {where})"
    if mount.kind == "show":
        return f"(allow file-read* {where}) (deny file-write* {where})"
    if mount.kind == "seal":
        return f"(deny file-write* {where})"
    return f"(deny file-read* file-write* {where})"


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def argv(rules: Rules, cwd: str, command: Sequence[str]) -> list[str]:
    """`command` under Seatbelt; sandbox-exec keeps the caller's folder, which is `cwd`."""
    del cwd
    env = ["/usr/bin/env", *(f"{name}={value}" for name, value in rules.env)] if rules.env else []
    return [BINARY, "-p", profile(rules), *env, *command]
