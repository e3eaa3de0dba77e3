"""The rules over one simple command: git, publishing, infrastructure, the environment, rm.

Each rule reads the command's words as the program would (its subcommand, its flags, unique
prefixes of long options), never a regular expression over the line: a quoted `"reset --hard"`
is a word, not a flag.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .shell import Command
from .shellwrap import SHELLS

Finding = tuple[str, str]

PUSH_WHY = (
    'pushing publishes work; the user can allow it with rails_allow: ["push"] or '
    "AUTOPILOT_CODEX_ALLOW_PUSH=1"
)
SECRET_VAR = re.compile(
    r"OPENAI_API_KEY|ANTHROPIC_API_KEY|AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GITHUB_TOKEN"
    r"|GH_TOKEN|[A-Z0-9_]*(_API_KEY|_SECRET|_SECRET_KEY|_TOKEN|_PASSWORD)"
)


@dataclass(frozen=True)
class Where:
    """What the rules compare paths with, resolved once per line."""

    worktree: Path
    home: Path
    config_file: Path
    allow_push: bool


def findings(command: Command, where: Where) -> Iterator[Finding]:
    if command.too_deep:
        yield ("unreadable", "shells nested this deep are not read; write the command plainly")
    if command.piped and command.name in SHELLS and _reads_stdin(command.argv):
        yield (
            "unreadable",
            f"{command.name} runs a script from its standard input, which cannot be read first "
            "(a pipe, or a heredoc that expands what the hook cannot know: quote its delimiter, "
            "<<'EOF')",
        )
    if command.name == "git" and len(command.argv) > 1:
        yield from _git(command.argv[1], command.argv[2:], where)
    yield from _tools(command.argv)
    yield from _environment(command)
    rm = _rm(command, where.worktree)
    if rm:
        yield ("rm", rm)


def _reads_stdin(argv: tuple[str, ...]) -> bool:
    """A shell with no `-c` and no script file runs what arrives on its standard input."""
    options = [a for a in argv[1:] if a.startswith(("-", "+"))]
    return len(options) == len(argv) - 1 and not any("c" in a for a in options if a[:2] != "--")


# -- git -----------------------------------------------------------------------------------------


def _flag(arg: str, name: str, shortest: int) -> bool:
    """`arg` is the long option `--name`, or a unique prefix git accepts for it."""
    body = arg[2:].split("=", 1)[0]
    return arg.startswith("--") and len(body) >= shortest and name.startswith(body)


def _shorts(args: tuple[str, ...]) -> str:
    return "".join(a[1:] for a in args if re.fullmatch(r"-[a-zA-Z0-9]+", a))


def _git(sub: str, args: tuple[str, ...], where: Where) -> Iterator[Finding]:
    if sub == "push":
        forced = _force(args)
        if forced:
            yield (
                "force-push",
                f"`{forced}` makes this a force push, which rewrites or deletes shared history; "
                "the force-push rule covers it, and allow_push (or allowing push) never does",
            )
        elif not where.allow_push:
            yield ("push", PUSH_WHY)
    elif sub == "reset" and any(_flag(a, "hard", 2) for a in args):
        yield ("reset-hard", "git reset --hard throws away uncommitted work")
    elif sub == "clean":
        dry = "n" in _shorts(args) or any(_flag(a, "dry-run", 2) for a in args)
        if not dry and (
            set(_shorts(args)) & set("fdxX") or any(_flag(a, "force", 1) for a in args)
        ):
            yield ("clean", "git clean deletes untracked files")
    elif sub == "branch":
        if set(_shorts(args)) & set("dD") or any(_flag(a, "delete", 3) for a in args):
            yield ("branch-delete", "branch deletion loses commits")
    elif sub in ("checkout", "restore", "switch") and _discards(sub, args):
        yield ("checkout-discard", "this discards every uncommitted change in the tree")


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

_PUBLISH = "publishing a package or an image is irreversible"
_INFRA = "infrastructure changes reach beyond the repository"
# Per program: the rule, the options before the subcommand that take a value, the subcommands.
_TOOLS: dict[str, tuple[str, str, frozenset[str], tuple[tuple[str, ...], ...]]] = {}


def _tool(names: str, rule: str, why: str, valued: str, verbs: str) -> None:
    entry = (
        rule,
        why,
        frozenset(valued.split()),
        tuple(tuple(v.split()) for v in verbs.split(",")),
    )
    for name in names.split():
        _TOOLS[name] = entry


_tool("npm", "publish", _PUBLISH, "--prefix -w --workspace", "publish,unpublish")
_tool("yarn", "publish", _PUBLISH, "--cwd", "publish,npm publish")
_tool("pnpm", "publish", _PUBLISH, "-C --dir --filter -F", "publish")
_tool("bun", "publish", _PUBLISH, "--cwd", "publish")
_tool("twine", "publish", _PUBLISH, "", "upload")
_tool("cargo", "publish", _PUBLISH, "-Z --config", "publish,yank")
_tool("poetry uv flit hatch", "publish", _PUBLISH, "--directory --project -C", "publish")
_tool("gem", "publish", _PUBLISH, "", "push,yank")
_tool(
    "docker podman",
    "publish",
    _PUBLISH,
    "-H --host --context -c --config -l --log-level",
    "push,image push,manifest push",
)
_tool("gh", "publish", _PUBLISH, "-R --repo", "release create,release upload,release edit")
_tool(
    "terraform tofu",
    "infra",
    _INFRA,
    "",
    "apply,destroy,import,taint,force-unlock,state rm,state mv,state push,workspace delete",
)
_tool(
    "kubectl",
    "infra",
    _INFRA,
    "-n --namespace --context --cluster --user -s --server --kubeconfig --token --as",
    "delete,apply,replace,patch,scale,drain,create,edit,cordon,taint,label,annotate,set,"
    "autoscale,expose,run,rollout restart,rollout undo",
)
_tool(
    "helm",
    "infra",
    _INFRA,
    "-n --namespace --kube-context --kubeconfig",
    "install,upgrade,uninstall,delete,rollback,push",
)
_tool("pulumi", "infra", _INFRA, "-s --stack -C --cwd", "up,update,destroy,refresh,stack rm")


def _tools(argv: tuple[str, ...]) -> Iterator[Finding]:
    entry = _TOOLS.get(argv[0]) if argv else None
    if entry is None:
        return
    rule, why, valued, verbs = entry
    words: list[str] = []
    i = 1
    while i < len(argv) and len(words) < 3:
        word = argv[i]
        if word.startswith("-"):
            i += 2 if word in valued else 1
            continue
        if not word.startswith("+"):  # `cargo +nightly publish`: a toolchain, not a verb
            words.append(word)
        i += 1
    for verb in verbs:
        if tuple(words[: len(verb)]) == verb:
            yield (rule, f"{' '.join((argv[0], *verb))}: {why}")
            return


# -- the environment -----------------------------------------------------------------------------

_DUMPS = frozenset({"printenv"})
_DECLARES = frozenset({"export", "declare", "typeset"})


def _environment(command: Command) -> Iterator[Finding]:
    secret = next((v for v in command.expands if SECRET_VAR.fullmatch(v)), None)
    if secret:
        yield ("secret-env", f"${secret} holds a credential")
    argv = command.argv
    name = command.name
    dumps = (
        name in _DUMPS
        or name == "env"  # what is left of `env` once unwrapped has no command to run
        or (name == "set" and len(argv) == 1)
        or (name in _DECLARES and all(re.fullmatch(r"-[px]+", a) for a in argv[1:]))
        or (name == "compgen" and "-e" in argv)
    )
    if dumps:
        yield ("secret-env", f"`{' '.join(argv)}` prints every variable, credentials included")


# -- rm ------------------------------------------------------------------------------------------


def _rm(command: Command, worktree: Path) -> str | None:
    argv = command.argv
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
        if resolved == worktree or not inside(resolved, worktree):
            return f"rm -r of {target} reaches outside the worktree or removes its root"
    return None


def resolve(raw: str, cwd: str) -> Path:
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(cwd) / path
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte or a lone surrogate
        return Path(os.path.normpath(path))


def inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
