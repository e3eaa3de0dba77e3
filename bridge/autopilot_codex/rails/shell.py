"""Read a shell command line as the shell does: every simple command it would run.

The line is parsed with tree-sitter-bash; pipelines, lists, subshells, groups, substitutions,
function bodies and control flow all yield their commands. Quotes, escapes and the variables the
hook can know (`$HOME`, `$AUTOPILOT_CODEX_HOME`, `~`, and any assigned earlier on the line) are
expanded; what runs another command (`env`, `sudo`, `xargs`, `sh -c`, `eval`, ...) is unwrapped
by `shellwrap`. A line the grammar cannot read is also split on its words, so an odd line is
judged by the same rules and never waved through.

tree-sitter is imported on first use only (`parser`): this module is loaded for PreToolUse on a
shell tool while a loop runs, never on the idle path.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import parser, shellwrap, unknown
from .command import Command, output_of
from .redirects import stdin_from_file
from .redirects import targets as redirect_targets
from .shellwords import expand_text, opaque, split_outside_quotes, text, word

__all__ = ["Command", "commands"]

# `sh -c "sh -c '...'"` nested deeper than this is not read but denied: no line needs it.
MAX_DEPTH = 4
_IFS = re.compile(r"\$\{?IFS\}?")


@dataclass
class _Scope:
    """What the walk knows as it reads the line left to right."""

    env: dict[str, str]
    cwd: str
    depth: int
    wrappers: tuple[str, ...] = ()
    out: list[Command] = field(default_factory=list)
    # Redirections tree-sitter hangs on a list or pipeline, by the command they belong to.
    attached: dict[tuple[int, int], list[Any]] = field(default_factory=dict)
    # Files the line has written so far, by name, with their text when it is known.
    written: dict[str, str | None] = field(default_factory=dict)
    # Variables declared as namerefs (`declare -n r`), whose next value names a variable.
    namerefs: set[str] = field(default_factory=set)


def commands(
    line: str, env: Mapping[str, str], cwd: str, *, depth: int = 0, wrappers: tuple[str, ...] = ()
) -> list[Command]:
    """Every simple command `line` would run, outermost first.

    `env` holds the variables whose values are known (at least HOME); `cwd` the directory the
    line starts in.
    """
    scope = _Scope(dict(env), cwd, depth, wrappers)
    if depth > MAX_DEPTH:
        return [Command((), line, cwd, wrappers=wrappers, too_deep=True)]
    root = parser.parse(line)
    if root is not None:
        try:
            _walk(root, scope, None)
        except RecursionError:  # thousands of nested groups: not a line anyone needs
            scope.out.append(Command((), line[:200], cwd, wrappers=wrappers, too_deep=True))
    if root is None or root.has_error or _IFS.search(line):
        # Judge the words too: a grammar error must not hide a command, nor `git${IFS}push`.
        words = _IFS.sub(" ", line)
        _words_fallback(words, _Scope(dict(env), cwd, depth, wrappers, scope.out))
    return scope.out


# -- the tree ------------------------------------------------------------------------------------

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
# A heredoc node's own parts; any other child is the rest of its line (see `_rest_of_line`).
# An ERROR there makes the line unparsable, so the word fallback judges it.
_HEREDOC_OWN = frozenset({"heredoc_start", "heredoc_body", "heredoc_end", "file_redirect", "ERROR"})


def _walk(node: Any, scope: _Scope, stdin: str | None, piped: bool = False) -> Command | None:
    """Emit the commands under `node`; return the last simple command it emitted directly."""
    kind = node.type
    if kind == "command":
        outer = scope.attached.pop((node.start_byte, node.end_byte), [])
        return _command(node, scope, stdin, outer, piped)
    if kind == "redirected_statement":
        return _redirected(node, scope, stdin, piped)
    if kind == "pipeline":
        return _stages(node.named_children, scope, stdin, piped)
    if kind == "list":
        # Only the first command of `a && b` reads what reaches the list.
        for index, child in enumerate(node.named_children):
            _walk(child, scope, stdin if index == 0 else None, piped and index == 0)
        return None
    if kind == "variable_assignment":
        name, value = _assignment(node, scope)
        scope.env[name] = value
        expands = tuple(_expansions(scope.env, node))
        why = unknown.indirection(scope.env, [node])
        if name in scope.namerefs:  # `declare -n r; r=KEY` points r at KEY
            target, why = unknown.referred(value)
            expands += (target,)
        _emit(scope, Command((), text(node), scope.cwd, (name,), expands, unknown=why))
        _nested(node, scope)
        return None
    if kind == "for_statement":  # the loop's variable takes each value in turn
        variable = node.child_by_field_name("variable")
        scope.env.pop(text(variable) if variable is not None else "", None)
    if kind in ("declaration_command", "unset_command"):
        return _declaration(node, scope)
    if kind in ("heredoc_body", "string", "concatenation"):
        _nested(node, scope)
        return None
    for child in node.named_children:
        _walk(child, scope, None)
    return None


def _stages(
    stages: list[Any], scope: _Scope, stdin: str | None, piped: bool, last: Command | None = None
) -> Command | None:
    """Walk pipeline stages; each reads what the one before it is known to write."""
    for child in stages:
        last = _walk(child, scope, stdin, piped)
        stdin, piped = output_of(last), True
    return last


def _redirected(node: Any, scope: _Scope, stdin: str | None, piped: bool) -> Command | None:
    body = node.child_by_field_name("body")
    redirects = [c for c in node.named_children if c.type in _REDIRECTS]
    if body is not None and body.type == "command":
        return _command(body, scope, stdin, redirects, piped)
    last_command = _last_command(body)
    if last_command is not None:
        # `a && cat <<EOF | sh`: the heredoc (and the rest of its line) belongs to `cat`.
        scope.attached[(last_command.start_byte, last_command.end_byte)] = redirects
        return _walk(body, scope, stdin, piped)
    last = _walk(body, scope, stdin, piped) if body is not None else None
    targets, _fed, _opaque = redirect_targets(redirects, scope.env)
    if targets:
        _emit(scope, Command((), text(node), scope.cwd, redirects=tuple(targets)))
    for redirect in redirects:
        _nested(redirect, scope)
    return _rest_of_line(redirects, scope, last)


def _last_command(body: Any) -> Any:
    """The command a redirection after a list or pipeline belongs to: its last one."""
    node = body
    while node is not None and node.type in ("list", "pipeline") and node.named_children:
        node = node.named_children[-1]
    return node if node is not body and node is not None and node.type == "command" else None


def _rest_of_line(redirects: list[Any], scope: _Scope, last: Command | None) -> Command | None:
    """What follows `<<EOF` on its line (`cat <<EOF | sh`, `cat <<EOF && git push`).

    tree-sitter-bash 0.25 parses it inside the heredoc's node: a `pipeline` that opens with `|`
    (its first stage reads what the command before it writes), or a command or list after `&&`,
    `||`.
    """
    for redirect in redirects:
        if redirect.type != "heredoc_redirect":
            continue
        for child in (c for c in redirect.named_children if c.type not in _HEREDOC_OWN):
            first = child.children[0].type if child.children else ""
            if child.type == "pipeline" and first in ("|", "|&"):
                last = _stages(child.named_children, scope, output_of(last), True)
            else:
                last = _walk(child, scope, None)
    return last


def _command(
    node: Any, scope: _Scope, stdin: str | None, outer: list[Any], piped: bool
) -> Command | None:
    assigned: list[str] = []
    words: list[str] = []
    built: list[str] = []
    redirects = list(outer)
    for child in node.named_children:
        kind = child.type
        if kind == "variable_assignment":
            assigned.append(_assignment(child, scope)[0])
        elif kind in _REDIRECTS:
            redirects.append(child)
        else:
            if kind == "command_name" and child.named_children:
                child = child.named_children[0]
            value = word(child, scope.env)
            # An unquoted expansion is split into words: `x="git push -f"; $x` runs `git`.
            words += value.split() if child.type == "simple_expansion" else [value]
            if opaque(child, scope.env):
                built.append(value)
    targets, fed, opaque_stdin = redirect_targets(redirects, scope.env)
    raw = Command(
        tuple(words),
        text(node),
        scope.cwd,
        tuple(assigned),
        tuple(_expansions(scope.env, node, *redirects)),
        tuple(targets),
        fed if fed is not None else stdin,
        scope.wrappers,
        piped=opaque_stdin or (piped and fed is None and stdin is None),
        stdin_file=stdin_from_file(redirects),
        unknown=unknown.indirection(scope.env, [node, *redirects]),
    )
    for child in (*node.named_children, *outer):
        _nested(child, scope)
    command = _unwrap_and_emit(raw, scope, built)
    for path, whole in unknown.redirected(redirects, scope.env):
        scope.written[unknown.base(path)] = output_of(command) if whole else None
    return _rest_of_line(redirects, scope, command)


def _declaration(node: Any, scope: _Scope) -> Command:
    """`export A=1`, `declare -x A`, `local a`, `unset A`: a command whose words are names."""
    words = [text(node.children[0])] if node.children else []
    assigned: list[str] = []
    referred: list[str] = []
    why = ""
    nameref = unknown.nameref([*words, *(text(c) for c in node.named_children)])
    for child in node.named_children:
        if child.type == "variable_assignment":
            name, value = _assignment(child, scope)
            scope.env[name] = value
            assigned.append(name)
            words.append(f"{name}={value}")
            if nameref:  # `declare -n r=KEY` reads KEY wherever r is expanded
                target, why = unknown.referred(value)
                referred.append(target)
        elif child.type == "variable_name":
            assigned.append(text(child))
            words.append(text(child))
            if nameref:
                scope.namerefs.add(text(child))
        else:
            words.append(word(child, scope.env))
    command = Command(
        tuple(words),
        text(node),
        scope.cwd,
        tuple(assigned),
        (*_expansions(scope.env, node), *referred),
        wrappers=scope.wrappers,
        unknown=why or unknown.indirection(scope.env, [node]),
    )
    _emit(scope, command)
    _nested(node, scope)
    return command


def _nested(node: Any, scope: _Scope) -> None:
    """The commands inside a word: `$(...)`, backticks, `<(...)`, wherever they sit."""
    if node.type in ("command_substitution", "process_substitution"):
        for inner in node.named_children:
            _walk(inner, scope, None)
        return
    children = node.named_children
    if node.type == "heredoc_redirect":  # the rest of its line is walked as commands
        children = [c for c in children if c.type in _HEREDOC_OWN]
    for child in children:
        _nested(child, scope)


def _assignment(node: Any, scope: _Scope) -> tuple[str, str]:
    name_node = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    name = text(name_node) if name_node is not None else text(node).split("=", 1)[0]
    return name, word(value, scope.env) if value is not None else ""


def _expansions(env: Mapping[str, str], *nodes: Any) -> Iterator[str]:
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.type == "arithmetic_expansion":  # `$((KEY))` evaluates KEY (and prints it)
            yield from (text(c) for c in node.named_children if c.type == "variable_name")
        if node.type in ("simple_expansion", "expansion"):
            for child in node.named_children:
                if child.type == "subscript":  # `${KEY[0]}` of a plain variable is its value
                    child = child.child_by_field_name("name") or child
                if child.type in ("variable_name", "special_variable_name"):
                    name = text(child)
                    yield name
                    # `${!A}` expands the variable whose name A holds, when the line set A.
                    if any(c.type == "!" for c in node.children[:2]) and name in env:
                        yield env[name]
                    break
        stack.extend(node.named_children)


# -- unwrapping and emitting ---------------------------------------------------------------------


def _unwrap_and_emit(raw: Command, scope: _Scope, built: list[str] | None = None) -> Command:
    found = shellwrap.unwrap(list(raw.argv), raw.stdin)
    wrapper = found.wrappers[-1] if found.wrappers else raw.name
    why = (
        raw.unknown
        or found.unknown
        or unknown.program(tuple(found.argv))
        or unknown.handed(found.scripts, built or (), wrapper)
    )
    generated = scope.written.get(unknown.base(found.argv[0])) if found.argv else None
    if found.argv and unknown.base(found.argv[0]) in scope.written and generated is None:
        why = why or f"`{found.argv[0]}` runs a file this line writes, which cannot be read first"
    command = Command(
        tuple(found.argv),
        raw.text,
        scope.cwd,
        raw.assigned + tuple(found.assigned),
        raw.expands,
        raw.redirects,
        raw.stdin,
        raw.wrappers + tuple(found.wrappers),
        too_deep=found.too_deep,
        piped=raw.piped,
        stdin_file=raw.stdin_file,
        unknown=why,
    )
    _emit(scope, command)
    for name in unknown.read_names(command.argv):
        scope.env.pop(name, None)
    for path in unknown.written(command.argv):
        scope.written[unknown.base(path)] = None
    for script in (*found.scripts, *([generated] if generated else [])):
        scope.out.extend(
            commands(script, scope.env, scope.cwd, depth=scope.depth + 1, wrappers=command.wrappers)
        )
    return command


def _emit(scope: _Scope, command: Command) -> None:
    scope.out.append(command)
    # `cd DIR && rm -r x` removes DIR/x: later commands are judged from DIR.
    if command.name in ("cd", "pushd") and len(command.argv) == 2:
        target = command.argv[1]
        scope.cwd = os.path.normpath(target if target.startswith("/") else f"{scope.cwd}/{target}")


def _words_fallback(line: str, scope: _Scope) -> None:
    """Split on the shell's operators and judge each part's words, as a shell roughly would.

    Split twice: on every operator (one inside a quoted `$(...)` still runs), and on operators
    outside quotes only (so `sh -c 'a; b'` stays one command whose script is read).
    """
    naive = re.split(r"&&|\|\||[;|&\n(){}`]|\$\(|<\(|>\(", line)
    quoted = [p for p in split_outside_quotes(line) if p not in naive]
    for part in (*naive, *quoted):
        if not part.strip():
            continue
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            words = part.split()
        words = [expand_text(w, scope.env) for w in words]
        assigned: list[str] = []
        while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
            assigned.append(words.pop(0).split("=", 1)[0])
        expands = re.findall(r"\$\{?([A-Za-z_]\w*)", part)
        raw = Command(
            tuple(words),
            part.strip(),
            scope.cwd,
            tuple(assigned),
            tuple(expands),
            wrappers=scope.wrappers,
        )
        _unwrap_and_emit(raw, scope, [w for w in words if "$" in w or "`" in w])
