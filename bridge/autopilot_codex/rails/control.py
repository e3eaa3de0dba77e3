"""The rules that keep the supervisor the user's: its launcher, its settings, the hosts' own CLIs
(a nested agent), and the code of interpreter one-liners that would reach the loop's state or a
secret file.

While a loop runs, the implementer may read the loop (`status`, `next`, `ask`) and nothing more:
a model the manager keeps blocking must not be able to stop its supervisor, raise its budget or
plan another goal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .rules import SECRET_VAR, Where, inside, resolve, unread_stdin
from .secrets import is_secret_path
from .shell import Command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..host import HostSet

LAUNCHER = "autopilot-codex"
MODULE = "autopilot_codex"
# What the implementer's tools may run of the launcher: reading, never steering.
READ_ONLY_VERBS = frozenset({"status", "next", "ask"})
SETTINGS_PREFIX = "AUTOPILOT_CODEX_"
_PYTHON = re.compile(r"(python|pypy)[0-9.]*(-[\w.]+)?")
_NODE = frozenset({"node", "nodejs", "bun", "deno"})
# Package managers' verbs that run a package's binary (`npx` and `bunx` are unwrapped already).
_RUNNERS = {"npm": ("exec", "x"), "pnpm": ("dlx", "exec"), "yarn": ("dlx", "exec"), "bun": ("x",)}
# A string literal in code, of any of the usual quotes.
_LITERAL = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"|`([^`]*)`")


def supervisor(command: Command, where: Where) -> str | None:
    """The loop's controls: its settings, its launcher's steering verbs, code that drives it."""
    for name in command.assigned:
        if name.startswith(SETTINGS_PREFIX):
            return f"{name} is the user's setting of the loop; a command may not set or unset it"
    args = launcher_args(command.argv)
    if args is not None:
        verb = _verb(args)
        if verb is not None and verb not in READ_ONLY_VERBS:
            return (
                f"`{LAUNCHER} {verb}` is the user's control of the loop; while it runs, your "
                f"tools may use only {', '.join(sorted(READ_ONLY_VERBS))}"
            )
    code = interpreter_code(command)
    if not code:
        return None
    if MODULE in code or _steers(code):
        return f"this {command.name} code drives {LAUNCHER} itself, the user's control"
    if SETTINGS_PREFIX in code and not _names_state(code, where):
        return f"this {command.name} code names the loop's settings ({SETTINGS_PREFIX}*)"
    return None


def host_cli(command: Command, where: Where) -> str | None:
    """A host's CLI started from the implementer's shell, by any path or package runner: by the
    names its packages and releases install (`Host.cli_names`); a copy under another name is
    not known."""
    started = _host_cli(command.argv, where.hosts)
    if started is None:
        return None
    return (
        f"`{started}` would start another agent session inside this loop: its hooks are not "
        "this loop's, so it would run unsupervised (and could claim or pause the loop); "
        "ask the user to run it themselves"
    )


def _host_cli(argv: tuple[str, ...], hosts: HostSet) -> str | None:
    if not argv:
        return None
    name = argv[0]
    if hosts.cli.fullmatch(name):
        return name
    # `$(which NAME) exec`: the program is not known, but it names a host CLI.
    if ("$" in name or "`" in name) and hosts.cli_named.search(name):
        return name
    words = [w for w in argv[1:] if not w.startswith("-")]
    packages = hosts.cli_packages()
    if name in _NODE:
        # `node node_modules/<package>/cli.js`
        script = next(iter(words), "")
        return script if any(p in script for p in packages) else None
    if name in _RUNNERS and words:
        if words[0] in _RUNNERS[name] and len(words) > 1:
            target = words[1]
        elif name in ("yarn", "pnpm"):
            target = words[0]  # `yarn NAME`, `pnpm NAME` run a local binary
        else:
            return None
        package = re.sub(r"(?<=.)@[^/@]*$", "", target)  # `<package>@latest`
        if package in packages or hosts.cli.fullmatch(package.rsplit("/", 1)[-1]):
            return f"{name} {words[0]} {target}"
    return None


def unreadable_code(command: Command, where: Where) -> str | None:
    return unread_stdin(command, "code") if reads_unknown_code(command) else None


def code_state(command: Command, where: Where) -> str | None:
    code = interpreter_code(command)
    if code and _names_state(code, where):
        return f"this {command.name} code names the loop's own state"
    for token in _literal_tokens(code):
        if token.startswith(("/", "~")) and inside(resolve(token, "/"), where.home):
            return f"this {command.name} code names the loop's own state ({token})"
    return None


def code_secret_env(command: Command, where: Where) -> str | None:
    names = re.findall(r"\b[A-Z][A-Z0-9_]+\b", interpreter_code(command))
    found = (name for name in names if SECRET_VAR.fullmatch(name))
    return next((f"this {command.name} code reads {n}, a credential" for n in found), None)


def code_secrets(command: Command, where: Where) -> str | None:
    for token in _literal_tokens(interpreter_code(command)):
        if is_secret_path(token):
            return f"this {command.name} code names {token}, which holds credentials"
    return None


# The launcher named in code (`.autopilot-codex` is the state home, judged by `code_state`), and
# the word after it, past quotes, commas, brackets and `-C DIR`.
_NAMED = re.compile(r"(?<!\.)" + LAUNCHER + r"""\b(?:[\s'",\[\]]|-C\s*\S+)*([\w-]*)""")


def _steers(code: str) -> bool:
    """Code naming the launcher with a verb other than the read-only ones, or none it can show
    (`"autopilot-codex " + verb`); `print("try autopilot-codex status")` is words in a string."""
    return any(m.group(1) not in READ_ONLY_VERBS for m in _NAMED.finditer(code))


def _names_state(code: str, where: Where) -> bool:
    return "AUTOPILOT_CODEX_HOME" in code or ".autopilot-codex" in code or str(where.home) in code


def _literal_tokens(code: str) -> Iterator[str]:
    """The words inside the string literals of some code: where a path would be named."""
    for literal in _LITERAL.finditer(code):
        text = next(g for g in literal.groups() if g is not None)
        yield from (t for t in re.split(r"[\s<>|+,;:()]+", text) if t)


def launcher_args(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    """The arguments given to autopilot-codex, by any name it runs under; None if it is not."""
    if not argv:
        return None
    if argv[0] == LAUNCHER or argv[0].startswith(MODULE):
        return argv[1:]
    if not _PYTHON.fullmatch(argv[0]):
        return None
    i = 1
    while i < len(argv):
        word = argv[i]
        if re.fullmatch(r"-[a-zA-Z]*m", word) or (word.startswith("-m") and len(word) > 2):
            module = argv[i + 1] if word.endswith("m") and i + 1 < len(argv) else word[2:]
            rest = argv[i + 2 :] if word.endswith("m") else argv[i + 1 :]
            return rest if module.split(".")[0] == MODULE else None
        if word in ("-W", "-X"):
            i += 2
        elif word.startswith("-") and word != "-":
            if "c" in word[1:]:
                return None  # code, judged by interpreter_code
            i += 1
        else:
            parts = word.replace("\\", "/").split("/")
            return argv[i + 1 :] if any(p.startswith(MODULE) for p in parts) else None
    return None


def _verb(args: tuple[str, ...]) -> str | None:
    i = 0
    while i < len(args):
        if args[i] == "-C":
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return args[i]
    return None


def interpreter_code(command: Command) -> str:
    """The code an interpreter one-liner runs (`python -c`, `node -e`, `perl -e`, stdin)."""
    found = _sources(command)
    if found is None:
        return ""
    pieces, script = found
    if not pieces and not script and command.stdin is not None:
        pieces = [command.stdin]  # `python3 - <<EOF`, `echo ... | node`
    return "\n".join(pieces)


def reads_unknown_code(command: Command) -> bool:
    """An interpreter whose code is its standard input, and that input is not known."""
    found = _sources(command)
    if found is None or found[0] or (found[1] and not _interactive(command)):
        return False
    return command.piped or command.reads_later


def _interactive(command: Command) -> bool:
    """`python3 -i tool.py`, `node -i`: it reads code from its standard input after the script."""
    flags = command.argv[
        1 : next((i for i, w in enumerate(command.argv) if i and w[:1] != "-"), None)
    ]
    if _PYTHON.fullmatch(command.name):
        return any(re.fullmatch(r"-[a-zA-Z]*i[a-zA-Z]*", w) for w in flags)
    return command.name in _NODE and any(w in ("-i", "--interactive") for w in flags)


def _sources(command: Command) -> tuple[list[str], bool] | None:
    """An interpreter's code arguments and whether it names a script; None if not one."""
    argv, name = command.argv, command.name
    if _PYTHON.fullmatch(name):
        pieces, script = _after(argv, r"-[a-zA-Z]*c", ("-W", "-X"))
    elif name in _NODE:
        pieces, script = _after(argv, r"-e|--eval|-p|--print|-pe|eval", ("-r", "--require"))
        pieces += [w.split("=", 1)[1] for w in argv if w.startswith(("--eval=", "--print="))]
    elif name in ("perl", "ruby"):
        pieces, script = _after(argv, r"-[a-zA-Z]*[eE]", ("-I", "-M"))
    elif name == "php":
        pieces, script = _after(argv, r"-r", ())
    else:
        return None
    return pieces, script


def _after(
    argv: tuple[str, ...], code_flag: str, valued: tuple[str, ...]
) -> tuple[list[str], bool]:
    """The words after each code flag, and whether a script file is named instead."""
    pieces: list[str] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        if re.fullmatch(code_flag, word) and i + 1 < len(argv):
            pieces.append(argv[i + 1])
            i += 2
        elif word in valued:
            i += 2
        elif word == "-":
            return pieces, False
        elif word.startswith("-"):
            i += 1
        else:
            return pieces, not pieces
    return pieces, False
