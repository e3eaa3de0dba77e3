"""The matchers over one simple command: git, publishing, infrastructure, the environment, rm.

Each rule reads the command's words as the program would (its subcommand, its flags, unique
prefixes of long options), never a regular expression over the line: a quoted `"reset --hard"`
is a word, not a flag.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from .shell import Command
from .shellwrap import SHELLS, STDIN_PATHS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..host import HostSet

PUSH_WHY = (
    'pushing publishes work; the user can allow it with rails_allow: ["push"] or '
    "AUTOPILOT_CODEX_ALLOW_PUSH=1"
)
SECRET_VAR = re.compile(
    r"OPENAI_API_KEY|ANTHROPIC_API_KEY|AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GITHUB_TOKEN"
    r"|GH_TOKEN|[A-Z0-9_]*(_API_KEY|_SECRET|_SECRET_KEY|_TOKEN|_PASSWORD)"
)


class Where:
    """What the rules compare paths with, resolved once per line.

    A plain class: a dataclass costs the hook about half a millisecond to create at import.
    """

    __slots__ = ("allow_push", "config_file", "home", "hosts", "resolved", "worktree")

    def __init__(
        self, worktree: Path, home: Path, config_file: Path, allow_push: bool, hosts: HostSet
    ) -> None:
        self.worktree, self.home, self.config_file = worktree, home, config_file
        self.allow_push = allow_push
        # Every registered host: their settings, run files, spend records and logins are
        # protected whichever host asks.
        self.hosts = hosts
        # Paths already resolved on this line: several rules compare the same word.
        self.resolved: dict[tuple[str, str], Path] = {}

    def resolve(self, raw: str, cwd: str) -> Path:
        key = (raw, cwd)
        if key not in self.resolved:
            self.resolved[key] = resolve(raw, cwd)
        return self.resolved[key]


# -- the matchers: one per rule, each the reason it denies `command`, or None --------------------


def unreadable(command: Command, where: Where) -> str | None:
    if command.too_deep:
        return "shells or wrappers nested this deep are not read; write the command plainly"
    readers = command.name in SHELLS or command.name in ("source", ".")
    if readers and _reads_stdin(command.argv) and (command.piped or command.reads_later):
        return unread_stdin(command, "a script")
    return None


def unread_stdin(command: Command, what: str) -> str:
    if not command.piped:
        return (
            f"{command.name} left reading its standard input runs {what} typed into it later "
            "(Codex's write_stdin), which no hook reads; give it on the line: `-c`, a file, "
            "or a quoted heredoc (<<'EOF')"
        )
    return (
        f"{command.name} runs {what} from its standard input, which cannot be read first "
        "(a pipe, or a heredoc that expands what the hook cannot know: quote its delimiter, "
        "<<'EOF')"
    )


def unknown(command: Command, where: Where) -> str | None:
    """A program the line computes as it runs: no rule over names could judge it."""
    return command.unknown or None


def _reads_stdin(argv: tuple[str, ...]) -> bool:
    """A shell (or `source`) with no `-c` and no script file, or a script that is the standard
    input (`bash /dev/stdin`, `sh -`, `bash -s`), runs what arrives on its standard input."""
    if argv[0] in ("source", "."):
        return argv[1:2] != () and argv[1] in STDIN_PATHS
    options = [a for a in argv[1:] if a.startswith(("-", "+")) and a != "-"]
    shorts = "".join(a[1:] for a in options if a[:2] != "--" and a[0] == "-")
    rest = [a for a in argv[1:] if a not in options]
    return "c" not in shorts and ("s" in shorts or not rest or rest[0] in STDIN_PATHS)


# -- git -----------------------------------------------------------------------------------------


def _flag(arg: str, name: str, shortest: int) -> bool:
    """`arg` is the long option `--name`, or a unique prefix git accepts for it."""
    body = arg[2:].split("=", 1)[0]
    return arg.startswith("--") and len(body) >= shortest and name.startswith(body)


def _shorts(args: tuple[str, ...]) -> str:
    return "".join(a[1:] for a in args if re.fullmatch(r"-[a-zA-Z0-9]+", a))


def _git_args(command: Command, sub: str | tuple[str, ...]) -> tuple[str, ...] | None:
    """The arguments after git's subcommand when it is `sub` (or one of them)."""
    argv = command.argv
    if command.name != "git" or len(argv) < 2:
        return None
    return argv[2:] if argv[1] == sub or (isinstance(sub, tuple) and argv[1] in sub) else None


def force_push(command: Command, where: Where) -> str | None:
    args = _git_args(command, "push")
    forced = _force(args) if args is not None and not _push_dry_run(args) else None
    if forced is None:
        return None
    return (
        f"`{forced}` makes this a force push, which rewrites or deletes shared history; "
        "the force-push rule covers it, and allow_push (or allowing push) never does"
    )


def push(command: Command, where: Where) -> str | None:
    args = _git_args(command, "push")
    if args is None or where.allow_push or _force(args) or _push_dry_run(args):
        return None
    return PUSH_WHY


def _push_dry_run(args: tuple[str, ...]) -> bool:
    """`git push --dry-run` (`-n`) sends nothing: it is not a push, forced or not."""
    return "n" in _shorts(args) or any(_flag(a, "dry-run", 3) for a in args)


def reset_hard(command: Command, where: Where) -> str | None:
    args = _git_args(command, "reset")
    if args is not None and any(_flag(a, "hard", 2) for a in args):
        return "git reset --hard throws away uncommitted work"
    return None


def clean(command: Command, where: Where) -> str | None:
    args = _git_args(command, "clean")
    if args is None or "n" in _shorts(args) or any(_flag(a, "dry-run", 2) for a in args):
        return None
    if set(_shorts(args)) & set("fdxX") or any(_flag(a, "force", 1) for a in args):
        return "git clean deletes untracked files"
    return None


def branch_delete(command: Command, where: Where) -> str | None:
    args = _git_args(command, "branch")
    if args is not None and (
        set(_shorts(args)) & set("dD") or any(_flag(a, "delete", 3) for a in args)
    ):
        return "branch deletion loses commits"
    return None


def checkout_discard(command: Command, where: Where) -> str | None:
    args = _git_args(command, ("checkout", "restore", "switch"))
    if args is not None and _discards(command.argv[1], args):
        return "this discards every uncommitted change in the tree"
    return None


def _force(args: tuple[str, ...]) -> str | None:
    for arg in args:
        if arg.startswith("--"):
            forcing = ("force", 3), ("force-with-lease", 7), ("mirror", 2), ("delete", 2)
            if any(_flag(arg, name, shortest) for name, shortest in forcing):
                return arg
        elif arg.startswith("-"):
            if re.fullmatch(r"-[a-zA-Z0-9]*[fd][a-zA-Z0-9]*", arg):
                return arg
        elif arg.startswith(("+", ":")) or re.match(r"[^:]*:\+", arg):
            return arg  # `+ref` forces, `:ref` deletes the remote branch
    return None


_WHOLE_TREE = frozenset({".", "./", ":/", ":/*", "*", ":(top)", ":(top)*"})


def _discards(sub: str, args: tuple[str, ...]) -> bool:
    shorts = set(_shorts(args))
    forced = "f" in shorts or any(_flag(a, "force", 2) for a in args)
    if sub == "switch":
        return forced or any(_flag(a, "discard-changes", 2) for a in args)
    whole = any(a in _WHOLE_TREE for a in args)
    if sub == "restore":
        staged_only = ("S" in shorts or any(_flag(a, "staged", 2) for a in args)) and not (
            "W" in shorts or any(_flag(a, "worktree", 1) for a in args)
        )
        return whole and not staged_only
    return whole or forced


# -- other tools ---------------------------------------------------------------------------------


# Subcommands of some programs (`docker push`, `docker image push`): the programs, the options
# before the subcommand that take a value (so a value is not read as a verb), the subcommands.
Verbs = tuple[frozenset[str], frozenset[str], tuple[tuple[str, ...], ...]]


def verbs(programs: str, valued: str, listed: str) -> Verbs:
    return (
        frozenset(programs.split()),
        frozenset(valued.split()),
        tuple(tuple(v.split()) for v in listed.split(",")),
    )


def subcommands(
    why: str, *table: Verbs, dry_runs: bool = False
) -> Callable[[Command, Where], str | None]:
    """A matcher denying the listed subcommands of the listed programs, with `why`; with
    `dry_runs`, a `--dry-run` makes the command harmless (it changes nothing)."""

    def match(command: Command, where: Where) -> str | None:
        if dry_runs and dry_run(command.argv):
            return None
        for entry in table:
            if command.name in entry[0]:
                verb = _verb_of(command.argv, entry)
                if verb is not None:
                    return f"{' '.join((command.name, *verb))}: {why}"
        return None

    return match


def dry_run(argv: tuple[str, ...]) -> bool:
    """`--dry-run` (`=client`, `=server`, `=true`; not `=none` or `=false`), and cargo's `-n`."""
    for arg in argv[1:]:
        name, _, value = arg.partition("=")
        if name == "--dry-run" and value.lower() not in ("none", "false", "0"):
            return True
    return argv[:1] == ("cargo",) and "-n" in argv


def raw_kubeconfig(command: Command, where: Where) -> str | None:
    if command.name == "kubectl" and "--raw" in command.argv and "view" in command.argv:
        return "`kubectl config view --raw` prints the cluster credentials"
    return None


def _verb_of(argv: tuple[str, ...], entry: Verbs) -> tuple[str, ...] | None:
    words: list[str] = []
    i = 1
    while i < len(argv) and len(words) < 3:
        word = argv[i]
        if word.startswith("-"):
            i += 2 if word in entry[1] else 1
            continue
        if not word.startswith("+"):  # `cargo +nightly publish`: a toolchain, not a verb
            words.append(word)
        i += 1
    return next((v for v in entry[2] if tuple(words[: len(v)]) == v), None)


# -- the environment -----------------------------------------------------------------------------

_DUMPS = frozenset({"printenv"})
_DECLARES = frozenset({"export", "declare", "typeset"})


def environment(command: Command, where: Where) -> str | None:
    """Expanding a credential variable, or printing every variable."""
    secret = next((v for v in command.expands if SECRET_VAR.fullmatch(v)), None)
    if secret:
        return f"${secret} holds a credential"
    argv, name = command.argv, command.name
    if name in (*_DECLARES, "local", "readonly") and any(
        re.fullmatch(r"-\w*p\w*", a) for a in argv
    ):
        secret = next((a for a in argv[1:] if SECRET_VAR.fullmatch(a)), None)
        if secret:
            return f"`{' '.join(argv)}` prints ${secret}, which holds a credential"
    if name in _DUMPS:
        # `printenv HOME` prints one harmless name; only no name (every one) or a credential's.
        named = [a for a in argv[1:] if not a.startswith("-")]
        secret = next((a for a in named if SECRET_VAR.fullmatch(a)), None)
        if secret:
            return f"`{' '.join(argv)}` prints ${secret}, which holds a credential"
    else:
        named = []
    dumps = (
        (name in _DUMPS and not named)
        or name == "env"  # what is left of `env` once unwrapped has no command to run
        or (name == "set" and len(argv) == 1)
        or (name in _DECLARES and all(re.fullmatch(r"-[px]+", a) for a in argv[1:]))
        or (name == "compgen" and "-e" in argv)
    )
    if dumps:
        return f"`{' '.join(argv)}` prints every variable, credentials included"
    return None


# -- rm ------------------------------------------------------------------------------------------


def rm(command: Command, where: Where) -> str | None:
    worktree, argv = where.worktree, command.argv
    if command.name != "rm":
        return None
    options = [w for w in argv[1:] if w.startswith("-")]
    shorts = "".join(w[1:] for w in options if not w.startswith("--"))
    if not ("r" in shorts.lower() or any(_flag(w, "recursive", 1) for w in options)):
        return None
    after = argv.index("--") + 1 if "--" in argv else len(argv)
    targets = [w for w in argv[1:after] if not w.startswith("-")] + list(argv[after:])
    for target in targets:
        if "$" in target or "`" in target:
            return f"rm -r of {target}: cannot tell what it expands to"
        glob = min((target.index(c) for c in "*?[" if c in target), default=None)
        base = target if glob is None else (target[:glob].rpartition("/")[0] or ".")
        resolved = resolve(base, command.cwd)
        if resolved == worktree or not (inside(resolved, worktree) or _scratch(resolved, where)):
            return f"rm -r of {target} reaches outside the worktree or removes its root"
    return None


def temp_roots() -> list[Path]:
    """The system's temporary folders: `$TMPDIR` (as the hook's environment has it), `/tmp`,
    `/var/tmp`."""
    import tempfile

    tmpdir = os.environ.get("TMPDIR", "").strip() or tempfile.gettempdir()
    return sorted({resolve(tmpdir, "/"), resolve("/tmp", "/"), resolve("/var/tmp", "/")})


def _scratch(path: Path, where: Where) -> bool:
    """Something below a temporary folder (never the folder itself) that holds neither the
    worktree, nor your home, nor the loop's state: scratch space anyone may clear. A temporary
    folder holding the worktree or the home is where work lives, not scratch."""
    keep = (where.worktree, where.home, resolve("~", "/"))
    return any(
        path != root and inside(path, root) and not any(inside(k, root) for k in keep)
        for root in temp_roots()
    )


def resolve(raw: str, cwd: str) -> Path:
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(cwd) / path
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte or a lone surrogate
        return Path(os.path.normpath(path))


def inside(path: Path, root: Path) -> bool:
    return path.is_relative_to(root)
