"""Unwrap a simple command down to the program it really runs.

`env A=1 sudo -u x timeout 5 /usr/bin/git -C repo push -f` runs `git push -f`: each wrapper's
own options are skipped by what that wrapper accepts, assignments are kept (a rule may care what
a command sets), and what a wrapper hands to a shell (`sh -c`, `eval`, `watch`, `find -exec`, a
git alias `!cmd`, a script fed on stdin) comes back as text to be parsed again.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

# Wrappers around wrappers: more than this is not a real command line.
MAX_STEPS = 16
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"})
# A script path that is the standard input: `bash /dev/stdin`, `source /dev/stdin`, `sh -`.
STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# `$SHELL -c '...'` runs a shell whichever it is (not `$0`: in `sh -c '$0' x` it is `x`).
_SHELL_VARIABLES = {
    f"{d}{n}{e}": "sh" for n in ("SHELL", "BASH") for d, e in (("$", ""), ("${", "}"))
}


@dataclass
class Unwrapped:
    argv: list[str]
    assigned: list[str] = field(default_factory=list)
    # Shell text this command runs: parsed again, one level deeper.
    scripts: list[str] = field(default_factory=list)
    wrappers: list[str] = field(default_factory=list)
    # More than MAX_STEPS wrappers: what they run is not read, so it cannot be judged.
    too_deep: bool = False
    # Why the program it runs cannot be named (its input or a word picks it), or "".
    unknown: str = ""


Step = Callable[[list[str], "str | None", Unwrapped], "list[str] | None"]


def unwrap(argv: list[str], stdin: str | None = None) -> Unwrapped:
    """The command `argv` runs once its wrappers are removed; argv[0] is a bare name."""
    result = Unwrapped(list(argv))
    for steps in range(MAX_STEPS + 1):
        if not result.argv:
            break
        result.argv[0] = _SHELL_VARIABLES.get(result.argv[0], program(result.argv[0]))
        step = _STEPS.get(result.argv[0])
        inner = step(result.argv, stdin, result) if step is not None else None
        if inner is None:
            break
        if steps == MAX_STEPS:
            # Still wrapped: judged as the wrapper, the command inside would go unread.
            result.too_deep = True
            break
        result.wrappers.append(result.argv[0])
        result.argv = inner
    if result.argv and result.argv[0] == "git":
        result.argv = _git(result.argv, result)
    return result


def program(word: str) -> str:
    """A path to a binary is that binary: `/usr/bin/git`, `${ROOT}/bin/git` are `git`. A name
    computed as the line runs (`$(cat /x/cmd)`, `<(curl ...)`) names no binary: it stays whole."""
    stripped = word.rstrip("/")
    name = stripped.rsplit("/", 1)[-1] if "/" in stripped else word
    return word if re.search(r"[$`()]", name) else name


def split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _options(args: list[str], start: int, valued: frozenset[str]) -> int:
    """The index of the first word after the options; `valued` options take the next word."""
    i = start
    while i < len(args):
        word = args[i]
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        i += 2 if word in valued else 1
    return i


def _env(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    i = 1
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        word = args[i]
        if word == "--":
            i += 1
            break
        split_string = _env_split_string(args, i)
        if split_string is not None:
            args = split_string
            continue
        if word in ("-u", "--unset") and i + 1 < len(args):
            result.assigned.append(args[i + 1])
        elif word.startswith("--unset="):
            result.assigned.append(word.split("=", 1)[1])
        elif word.startswith("-u") and len(word) > 2:
            result.assigned.append(word[2:])
        i += 2 if word in ("-u", "--unset", "-C", "--chdir") else 1
    while i < len(args) and _ASSIGNMENT.match(args[i]):
        result.assigned.append(args[i].split("=", 1)[0])
        i += 1
    # A bare `env` prints the environment: it stays, for the rule that denies that.
    return args[i:] or None


def _env_split_string(args: list[str], i: int) -> list[str] | None:
    """`env -S 'git push -f'`: the string is split into words in place."""
    word = args[i]
    if word in ("-S", "--split-string"):
        if i + 1 >= len(args):
            return None
        return [*args[:i], *split(args[i + 1]), *args[i + 2 :]]
    if word.startswith("--split-string="):
        return [*args[:i], *split(word.split("=", 1)[1]), *args[i + 1 :]]
    if word.startswith("-S") and len(word) > 2:
        return [*args[:i], *split(word[2:]), *args[i + 1 :]]
    return None


def _command(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    i = _options(args, 1, frozenset())
    # `command -v git` only looks a name up.
    if any(re.fullmatch(r"-[pvV]*[vV][pvV]*", w) for w in args[1:i]):
        return None
    return args[i:] or None


def _simple(valued: frozenset[str]) -> Step:
    def step(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
        return args[_options(args, 1, valued) :] or None

    return step


def _timeout(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    i = _options(args, 1, frozenset({"-s", "-k", "--signal", "--kill-after"}))
    return args[i + 1 :] or None  # the word after the options is the duration


def _sudo(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    valued = frozenset({"-u", "-g", "-C", "-D", "-p", "-r", "-t", "-U", "-T", "-R", "-h"})
    i = _options(args, 1, valued if args[0] == "sudo" else frozenset({"-u", "-C"}))
    while i < len(args) and _ASSIGNMENT.match(args[i]):
        result.assigned.append(args[i].split("=", 1)[0])
        i += 1
    return args[i:] or None


def _xargs(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    valued = frozenset({"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"})
    i = _options(args, 1, valued)
    replace = next(
        (args[j + 1] for j in range(1, i - 1) if args[j] == "-I"),
        next((w[2:] for w in args[1:i] if w.startswith("-I") and len(w) > 2), None),
    )
    command = args[i:] or ["echo"]
    if stdin is None and _runs_its_input(command, replace):
        result.unknown = f"`{' '.join(args)}` runs a program or script its input names"
    items = _items(args[1:i], stdin, bool(replace)) if stdin is not None else []
    if not replace:  # its input becomes the command's arguments, as xargs would pass them
        return command + items
    # One run per item; the runs after the first are read as scripts of their own.
    runs = [[w.replace(replace, item) for w in command] for item in items or [""]]
    result.scripts.extend(shlex.join(run) for run in runs[1:])
    return runs[0]


def _items(options: list[str], stdin: str, lines: bool) -> list[str]:
    """xargs's input items: split on NULs (`-0`) or a delimiter (`-d`) as they are, quotes and
    all; else on blanks, or on lines with `-I`, with its quotes removed."""
    if "-0" in options or "--null" in options:
        return [item for item in stdin.split("\0") if item]
    delimiter = next((options[j + 1] for j in range(len(options) - 1) if options[j] == "-d"), None)
    if delimiter is not None:
        cut = "\n" if delimiter in ("\\n", "\n") else delimiter[:1] or "\n"
        return [item for item in stdin.split(cut) if item]
    if lines:
        return [" ".join(split(line)) for line in stdin.splitlines() if line.strip()]
    return split(stdin)


def _runs_its_input(command: list[str], replace: str | None) -> bool:
    """xargs over input the hook cannot know, whose command is named by that input: `-I{} {}`,
    or a wrapper or shell left with nothing of its own to run (`xargs sh -c`, `xargs env`)."""
    if replace and replace in command[0]:
        return True
    inner = unwrap(command)
    if replace and any(replace in s for s in inner.scripts):
        return True
    name = inner.argv[0] if inner.argv else ""
    return name in _STEPS and name not in ("find", "alias") and not inner.scripts


def _shell(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    valued = frozenset({"-o", "+o", "--rcfile", "--init-file", "-O", "+O"})
    i = _options(args, 1, valued)
    flags = "".join(w[1:] for w in args[1:i] if w.startswith("-") and not w.startswith("--"))
    if "c" in flags:
        if i < len(args):
            result.scripts.append(args[i])
        return None
    if i < len(args) and "s" not in flags and args[i] not in STDIN_PATHS:
        return args[i:]  # `bash path/to/script args`: the script runs
    if stdin is not None:
        result.scripts.append(stdin)
    return None


def _eval(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    result.scripts.append(" ".join(args[1:]))
    return None


def _alias(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    """`alias g='git push -f'` is judged as what `g` would run."""
    result.scripts.extend(a.split("=", 1)[1] for a in args[1:] if "=" in a)
    return None


def _source(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    if len(args) > 1 and args[1] in STDIN_PATHS:
        if stdin is not None:
            result.scripts.append(stdin)
        return None
    return args[1:] or None


def _trap(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    """`trap 'git push -f' EXIT` runs its action later: the action is read as a script."""
    i = _options(args, 1, frozenset())
    if i < len(args) and args[i] != "-" and not any(w in ("-p", "-l") for w in args[1:i]):
        result.scripts.append(args[i])
    return None


def _coproc(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    """`coproc cmd`, `coproc NAME { cmd; }`: the command runs beside the shell."""
    start = 3 if args[2:3] == ["{"] else 2 if args[1:2] == ["{"] else 1
    return args[start:] or None


def _watch(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    i = _options(args, 1, frozenset({"-n", "--interval", "-q", "--equexit"}))
    if any(w in ("-x", "--exec") for w in args[1:i]):
        return args[i:] or None
    result.scripts.append(" ".join(args[i:]))
    return None


def _find(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    for i, word in enumerate(args):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            result.scripts.append(shlex.join(args[i + 1 : end]))
    return None


def _runner(args: list[str], stdin: str | None, result: Unwrapped) -> list[str] | None:
    """`uv run`, `poetry run` and the like run the rest of the line."""
    if len(args) < 2 or args[1] != "run":
        return None
    valued = frozenset(
        {"--with", "--python", "-p", "--project", "--directory", "--package", "--env-file"}
    )
    return args[_options(args, 2, valued) :] or None


def _git(argv: list[str], result: Unwrapped) -> list[str]:
    """`git -C x -c k=v --no-pager push` is `git push`; a `-c alias.x=...` is followed."""
    valued = frozenset(
        {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
    )
    configs: list[str] = []
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "-c" and i + 1 < len(argv):
            configs.append(argv[i + 1])
        i += 2 if argv[i] in valued else 1
    if i >= len(argv):
        return ["git", *argv[i:]]
    sub, rest = argv[i], argv[i + 1 :]
    if "$" in sub or "`" in sub:
        result.unknown = f"git's subcommand `{sub}` cannot be known before it runs"
    if sub == "config":
        _configured_alias(rest, result)
    for config in configs:
        key, _, value = config.partition("=")
        if key.lower() == f"alias.{sub}".lower():
            if value.startswith("!"):
                result.scripts.append(" ".join([value[1:], *map(shlex.quote, rest)]))
                return ["git", sub, *rest]
            return _git(["git", *split(value), *rest], result)
        # A configured refspec `+ref` or a mirror remote forces every push.
        remote = re.fullmatch(r"remote\..+\.(push|mirror)", key, re.IGNORECASE)
        if sub == "push" and remote and (value.startswith("+") or key.lower().endswith("mirror")):
            rest = [*rest, "--force"]
    return ["git", sub, *rest]


def _configured_alias(args: list[str], result: Unwrapped) -> None:
    """`git config alias.x '!git push -f'` is judged as what `git x` will run."""
    words = [a for a in args if not a.startswith("-")]
    if len(words) >= 2 and words[0].lower().startswith("alias."):
        value = words[1]
        result.scripts.append(value[1:] if value.startswith("!") else f"git {value}")


_STEPS: dict[str, Step] = {
    "env": _env,
    "command": _command,
    "builtin": _simple(frozenset()),
    "exec": _simple(frozenset({"-a"})),
    "nohup": _simple(frozenset()),
    "setsid": _simple(frozenset()),
    "time": _simple(frozenset({"-f", "-o", "--format", "--output"})),
    "timeout": _timeout,
    "nice": _simple(frozenset({"-n", "--adjustment"})),
    "ionice": _simple(frozenset({"-c", "-n", "-p", "-P", "-u"})),
    "stdbuf": _simple(frozenset({"-i", "-o", "-e"})),
    "sudo": _sudo,
    "doas": _sudo,
    "xargs": _xargs,
    "eval": _eval,
    "alias": _alias,
    "busybox": _simple(frozenset()),
    "source": _source,
    ".": _source,
    "watch": _watch,
    "trap": _trap,
    "coproc": _coproc,
    "find": _find,
    **dict.fromkeys(("uv", "poetry", "pdm", "pipenv", "hatch", "rye", "pipx"), _runner),
    **dict.fromkeys(
        ("uvx", "npx", "bunx", "pnpx"), _simple(frozenset({"--from", "-p", "--package", "--with"}))
    ),
    **dict.fromkeys(SHELLS, _shell),
}
