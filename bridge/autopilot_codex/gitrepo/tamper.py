"""What in the git directory could run a program or hide a change: findings of their own.

The bridge's own git calls switch all of these off (runner.py), but the user's git and the
host's tools do not, and a change the review cannot see as a diff line must still be told:
to the manager (a section of the review's diff) and to the user (a `git_tamper` event).
These are reported while present, not only when they first appear: the bridge keeps no
baseline of the repository's config, and a hooks manager the user installed is worth a
line in the review too.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import nofollow
from ..errors import BridgeError
from ..paths import within
from .nested import git_dir, small
from .runner import Location, locate, run_bytes

# Keys (lowercased, subsection as `*`) that run a program, whatever their value.
_RUNS = re.compile(
    r"^(core\.(fsmonitor|hookspath|pager|editor|askpass|sshcommand|gitproxy|alternaterefscommand)"
    r"|diff\.external|sequence\.editor|gpg\.program|gpg\.[^.]+\.program|credential\.helper"
    r"|credential\..+\.helper|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)"
    r"|merge\..+\.driver|pager\..+|interactive\.difffilter|uploadpack\.packobjectshook"
    r"|remote\..+\.(uploadpack|receivepack)|submodule\..+\.update|include\.path"
    r"|includeif\..+\.path)$"
)
# Keys that hide content from a diff or a status, with the values that do not.
_HIDES: dict[str, tuple[str, ...]] = {
    "core.worktree": (),
    "core.excludesfile": (),
    "core.attributesfile": (),
    "core.usereplacerefs": ("true",),
    "core.symlinks": ("true",),
    "core.filemode": ("true",),
    "core.trustctime": ("true",),
    "core.checkstat": ("default",),
    "core.sparsecheckout": ("false",),
    "core.bigfilethreshold": (),
    "diff.ignoresubmodules": ("none",),
    "status.showuntrackedfiles": ("normal", "all"),
    "diff.relative": ("false",),
}
_HIDES_PATTERN = re.compile(r"^(diff\..+\.binary|submodule\..+\.ignore)$")
# Values that switch a "runs" key off.
_OFF = ("", "false", "0", "no", "off")


@dataclass(frozen=True)
class GitFinding:
    """One thing in the git directory that runs a program or hides content."""

    kind: str  # "config", "hook", "attributes", "exclude", "replace", "flag"
    where: str  # the config key, the file or the path it is about
    detail: str

    def line(self) -> str:
        return f"{self.kind} {self.where}: {self.detail}"


def findings(path: Path, *, own_excludes: tuple[str, ...] = ()) -> list[GitFinding]:
    """Everything in the repository's git directory that runs a program or hides content.

    `own_excludes`: lines of `.git/info/exclude` the bridge wrote itself (not reported).
    """
    where = locate(path)
    return _config(path) + _hooks(where) + _info(where, own_excludes) + _replace_refs(path)


def _config(path: Path) -> list[GitFinding]:
    try:
        out = run_bytes(path, "config", "-z", "--list", "--show-scope", "--includes")
    except BridgeError as exc:
        return [GitFinding("config", "config", f"unreadable: {exc}")]
    fields = out.split(b"\0")
    found: list[GitFinding] = []
    for scope, entry in zip(fields[0::2], fields[1::2], strict=False):
        if scope == b"command":
            continue  # the bridge's own overrides
        key_raw, _, value_raw = entry.partition(b"\n")
        key = key_raw.decode("utf-8", "replace")
        value = value_raw.decode("utf-8", "replace")
        generic = _generic(key)
        shell_alias = generic.startswith("alias.") and value.lstrip().startswith("!")
        if shell_alias or (_RUNS.match(generic) and value.strip().lower() not in _OFF):
            found.append(GitFinding("config", key, f"runs {value!r}"))
        elif _hides(generic, value):
            found.append(GitFinding("config", key, f"can hide changes: {value!r}"))
    return found


def _hides(generic: str, value: str) -> bool:
    if generic in _HIDES:
        return value.strip().lower() not in _HIDES[generic]
    return bool(_HIDES_PATTERN.match(generic))


def _generic(key: str) -> str:
    """`diff.Foo Bar.textconv` -> `diff.foo bar.textconv`: section and name are caseless."""
    section, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    return f"{section.lower()}.{sub}{dot}{name.lower()}" if dot else f"{section.lower()}.{name}"


def _hooks(where: Location) -> list[GitFinding]:
    names = _hook_names(where.common_dir / "hooks")
    return [GitFinding("hook", f"hooks/{n}", "runs on git commands") for n in names]


def _hook_names(folder: Path) -> list[str]:
    try:
        return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".sample"))
    except OSError:
        return []


def _info(where: Location, own_excludes: tuple[str, ...]) -> list[GitFinding]:
    found: list[GitFinding] = []
    for name, kind, why in (
        ("attributes", "attributes", "sets filters, diff drivers or binary flags"),
        ("exclude", "exclude", "hides untracked files"),
    ):
        # Read where it lies: a link there (to `~/.aws/credentials`, say) is named, not read.
        what, data = nofollow.read(where.common_dir, f"info/{name}")
        if what == "link":
            target = os.fsdecode(data or b"")
            found.append(GitFinding(kind, f"info/{name}", f"a link to {target!r}: not read"))
        if what != "file":
            continue
        for line in (data or b"").decode("utf-8", "replace").splitlines():
            rule = line.strip()
            if rule and not rule.startswith("#") and rule not in own_excludes:
                found.append(GitFinding(kind, f"info/{name}", f"{rule!r} {why}"))
    return found


def _replace_refs(path: Path) -> list[GitFinding]:
    try:
        out = run_bytes(path, "for-each-ref", "--format=%(refname)", "refs/replace/")
    except BridgeError:
        return []
    refs = out.decode("utf-8", "replace").split()
    return [GitFinding("replace", r, "replaces an object in every git view") for r in refs]


_SECTION = re.compile(r'^\[\s*([^\s\]"]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')


def nested_findings(worktree: Path, repos: list[str]) -> list[GitFinding]:
    """What the config and hooks of each nested repository would run, read as text (git is
    never run there): for the manager, since the implementer may have planted it there."""
    found: list[GitFinding] = []
    # A `.git` file (or a folder on the way) may name any folder: only the work tree and the
    # top repository's own git directory (where submodules keep theirs) are read.
    allowed = [os.path.realpath(worktree)]
    with contextlib.suppress(BridgeError):  # no repository around: the work tree alone
        allowed.append(os.path.realpath(locate(worktree).common_dir))
    for path in repos:
        where = git_dir(worktree / path)
        if where is None:
            continue
        real = os.path.realpath(where)
        if not any(within(real, root) for root in allowed):
            what = f"its git directory {real!r} lies outside the work tree: not read"
            found.append(GitFinding("nested", f"{path}/ .git", what))
            continue
        for key, value in _config_text(small(where / "config")):
            if _RUNS.match(_generic(key)) and value.strip().lower() not in _OFF:
                what = f"runs {value!r} in git there (never run by the bridge)"
                found.append(GitFinding("nested", f"{path}/ {key}", what))
        for hook in _hook_names(where / "hooks"):
            found.append(GitFinding("nested", f"{path}/ hooks/{hook}", "runs on git there"))
    return found


def _config_text(text: str) -> list[tuple[str, str]]:
    """(key, value) of a git config file read as text: `[section "sub"]` and the old
    `[section.sub]` headers, one `name = value` a line (continuations and includes are not
    followed: this only names, it never decides)."""
    pairs: list[tuple[str, str]] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        header = _SECTION.match(line)
        if header:
            name, sub = header.group(1), header.group(2)
            # Section and key names are caseless (git lowercases them); a subsection is not.
            section = f"{name.lower()}.{sub}" if sub is not None else name.lower()
            line = line[header.end() :].strip()
        if not line or line[0] in "#;" or not section:
            continue
        name, _, value = line.partition("=")
        pairs.append((f"{section}.{name.strip().lower()}", value.strip().strip('"')))
    return pairs


def flag_findings(flagged: dict[str, str]) -> list[GitFinding]:
    """Findings for paths whose index entry hides their edits (see review.flagged)."""
    return [GitFinding("flag", p, why) for p, why in sorted(flagged.items())]
