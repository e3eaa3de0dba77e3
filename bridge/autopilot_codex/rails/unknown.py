"""What a line would run that the rails cannot name before it runs.

A rule over names judges the program a command names. When the program is not a word of the
line but something computed as it runs (an expansion, a loop's data, a file the line writes, a
variable a nameref points to), no rule could judge it: the shell reader marks such a command
as unknown, and the `unknown` rule stops it, however harmless the line looks. A literal program
with computed arguments (`for f in *.py; do ruff check "$f"; done`) is read as usual.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .shellwords import text, word

# Commands that set the variables they name from data: what the line knew of them is gone.
_READERS = frozenset({"read", "mapfile", "readarray", "getopts"})
# Options of `read`/`mapfile` that take a value, so the value is not read as a name.
_READ_VALUED = frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u", "-C", "-c", "-O", "-s"})
# Writers that name the file they write: the option before it, or their last word.
_OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    "curl": ("-o", "--output"),
    "wget": ("-O", "--output-document"),
    **dict.fromkeys(("tee", "cp", "mv", "install", "ln"), ()),
}


def program(argv: tuple[str, ...]) -> str:
    """Why the program `argv` runs cannot be named, or ""."""
    name = argv[0] if argv else ""
    if "$" in name or "`" in name or name.startswith(("<(", ">(")):
        return f"the program `{name}` is computed as the line runs, so it cannot be judged first"
    return ""


def handed(scripts: Iterable[str], opaque: Iterable[str], wrapper: str) -> str:
    """Why shell text handed to `eval`, `sh -c` and the like cannot be read: it holds a word the
    outer shell expands from data, and the inner shell parses whatever that turns out to be."""
    words = [w for w in opaque if w]
    for script in scripts:
        built = next((w for w in words if w in script), None)
        if built is not None:
            return f"`{wrapper}` parses text built from `{built}`, which cannot be known first"
    return ""


def indirection(env: Mapping[str, str], nodes: Iterable[Any]) -> str:
    """`${!x}` expands the variable whose name `x` holds: unknown unless the line set `x`."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "expansion" or not any(c.type == "!" for c in node.children[:2]):
            continue
        names = [c for c in node.named_children if c.type == "variable_name"]
        listing = re.search(r"[*@]\]?\}$", text(node))  # `${!A*}`, `${!a[@]}`: names, not values
        if names and not listing and text(names[0]) not in env:
            return f"`{text(node)}` expands a variable whose name cannot be known first"
    return ""


def read_names(argv: tuple[str, ...]) -> list[str]:
    """The variables `read`, `mapfile`, `getopts` and `printf -v` set from data."""
    name = argv[0] if argv else ""
    if name == "printf":
        return [argv[i + 1] for i in range(1, len(argv) - 1) if argv[i] == "-v"]
    if name not in _READERS:
        return []
    names: list[str] = []
    i = 1
    while i < len(argv):
        if argv[i] in _READ_VALUED:
            i += 2
            continue
        if not argv[i].startswith("-"):
            names.append(argv[i])
        i += 1
    return names or ["REPLY", "MAPFILE", "OPTARG"]


def nameref(words: list[str]) -> bool:
    """`declare -n`, `local -n`, `typeset -n`: each name refers to the variable its value names
    (`export -n` only unexports)."""
    if not words or words[0] not in ("declare", "local", "typeset"):
        return False
    return any(re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", w) for w in words[1:])


def referred(target: str) -> tuple[str, str]:
    """What a nameref's target adds: the variable it names, or why that cannot be named."""
    name = target.split("[", 1)[0]
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name, ""
    return "", f"a nameref to `{target}`, a variable that cannot be named first"


def written(argv: tuple[str, ...]) -> list[str]:
    """The files a command writes by naming them (`tee f`, `cp a f`, `curl -o f`)."""
    name = argv[0] if argv else ""
    if name not in _OUTPUT_OPTIONS:
        return []
    options = _OUTPUT_OPTIONS[name]
    if options:
        letter = options[0][1]  # also in a cluster: `curl -so f`
        found = [
            argv[i + 1]
            for i in range(1, len(argv) - 1)
            if argv[i] in options or re.fullmatch(f"-[a-zA-Z]*{letter}", argv[i])
        ]
        return found + [w.split("=", 1)[1] for w in argv if w.startswith("--output")]
    words = [w for w in argv[1:] if not w.startswith("-")]
    return words if name == "tee" else words[-1:]


def redirected(redirects: Iterable[Any], env: Mapping[str, str]) -> list[tuple[str, bool]]:
    """The files redirections write, and whether each is written whole (`>`, not `>>`)."""
    out: list[tuple[str, bool]] = []
    for redirect in redirects:
        dest = redirect.child_by_field_name("destination")
        operator = next((c.type for c in redirect.children if not c.is_named), "")
        if redirect.type == "file_redirect" and dest is not None and ">" in operator:
            out.append((word(dest, env), operator in (">", ">|", "&>")))
    return out


def base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]
