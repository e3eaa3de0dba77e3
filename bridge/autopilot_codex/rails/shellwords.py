"""The words of a parsed shell line, as the shell would pass them: quotes removed, escapes
undone, `~` and the variables the hook knows expanded; what it cannot know stays as written
(so a `$` in a word still says "cannot tell").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def word(node: Any, env: Mapping[str, str]) -> str:
    kind = node.type
    if kind == "word":
        return tilde(_unescape(text(node)), env)
    if kind == "raw_string":
        return text(node)[1:-1]
    if kind in ("string", "translated_string"):
        return _quoted(node, env)
    if kind == "ansi_c_string":
        return _ansi_c(text(node)[2:-1])
    if kind == "concatenation":
        # A tilde expands at the start of a word only.
        parts = [_unescape(text(c)) if c.type == "word" else word(c, env) for c in node.children]
        joined = "".join(parts)
        return tilde(joined, env) if node.children[0].type == "word" else joined
    if kind in ("simple_expansion", "expansion"):
        return _variable(node, env)
    if kind == "command_substitution":
        return _echoed(node, env)
    return text(node)


def _quoted(node: Any, env: Mapping[str, str]) -> str:
    """A double-quoted word, with what lies between its parts (the parser leaves a newline
    out of every part; the shell keeps it)."""
    raw, base = bytes(node.text or b""), node.start_byte

    def between(start: int, end: int) -> str:
        return raw[start - base : end - base].decode("utf-8", "replace")

    at = node.children[0].end_byte if node.children else base
    parts: list[str] = []
    for child in node.named_children:
        parts += [between(at, child.start_byte), _string_part(child, env)]
        at = child.end_byte
    end = node.children[-1].start_byte if len(node.children) > 1 else node.end_byte
    return "".join([*parts, between(at, end)])


def _string_part(node: Any, env: Mapping[str, str]) -> str:
    if node.type == "string_content":
        return re.sub(r"\\([$`\"\\\n])", r"\1", text(node))
    return word(node, env)


def _variable(node: Any, env: Mapping[str, str]) -> str:
    names = [c for c in node.named_children if c.type == "variable_name"]
    # `$NAME` and `${NAME}` only: `${NAME:-x}` and the like stay as written.
    plain = node.type == "simple_expansion" or len(node.named_children) == 1
    if names and plain and text(names[0]) in env:
        return env[text(names[0])]
    return text(node)


def _echoed(node: Any, env: Mapping[str, str]) -> str:
    """`$(echo git)` is `git`, `$(printf '.e%s' nv)` is `.env`; any other substitution stays as
    written (it contains `$`)."""
    inner = node.named_children
    if len(inner) == 1 and inner[0].type == "command":
        words = [
            word(c.named_children[0] if c.type == "command_name" else c, env)
            for c in inner[0].named_children
        ]
        if words and all("$" not in w for w in words):
            if words[0] == "echo":
                return " ".join(w for w in words[1:] if w != "-n")
            printed = printf(words[1:]) if words[0] == "printf" else None
            if printed is not None:
                return printed.rstrip("\n")  # a substitution drops trailing newlines
    return text(node)


_FORMAT = re.compile(r"%([%sbdc])|\\(x[0-9a-fA-F]{1,2}|0?[0-7]{1,3}|.)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "a": "\a", "e": "\x1b"}


def printf(args: list[str]) -> str | None:
    """What `printf FORMAT ARGS...` prints, for the plain formats (`%s`, `%b`, `%d`, `%c`, and
    backslash escapes); None for any other."""
    args = args[1:] if args[:1] == ["--"] else args
    if not args or re.search(r"%(?![sbdc])", args[0].replace("%%", "")):
        return None
    pieces = _FORMAT.split(args[0])  # text, conversion, escape, text, ...
    rest, out = list(args[1:]), []
    while True:
        used = 0
        for index, piece in enumerate(pieces):
            kind = index % 3
            if kind == 0 or piece is None:
                out.append(piece or "")
            elif kind == 2:
                out.append(_escape(piece))
            elif piece == "%":
                out.append("%")
            else:
                value = rest[used] if used < len(rest) else ""
                used += 1
                out.append(value[:1] if piece == "c" else value)
        rest = rest[used:]
        if not rest or not used:  # the format is reused while arguments are left
            return "".join(out)


def _escape(code: str) -> str:
    if code[0] == "x":
        return chr(int(code[1:], 16))
    if code[0] in "01234567":
        return chr(int(code, 8) & 0xFF)
    return _ESCAPES.get(code, "\\" + code)


def opaque(node: Any, env: Mapping[str, str]) -> bool:
    """A word holding an expansion the hook cannot know, outside single quotes: a shell that is
    handed it (`eval`, `sh -c "..."`) parses whatever it turns out to be."""
    kind = node.type
    if kind in ("raw_string", "ansi_c_string"):
        return False
    if kind in ("simple_expansion", "expansion", "command_substitution"):
        return word(node, env) == text(node)
    if kind in ("process_substitution", "arithmetic_expansion"):
        return True
    return any(opaque(child, env) for child in node.named_children)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def tilde(text: str, env: Mapping[str, str]) -> str:
    home = env.get("HOME", "")
    if home and (text == "~" or text.startswith("~/")):
        return home + text[1:]
    return text


def _ansi_c(body: str) -> str:
    import warnings

    try:
        with warnings.catch_warnings():  # `$'\ '`: an escape Python does not know stays as is
            warnings.simplefilter("ignore", DeprecationWarning)
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


def text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "replace")


def expand_text(word: str, env: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        return env.get(match.group(1) or match.group(2), match.group(0))

    return tilde(re.sub(r"\$\{(\w+)\}|\$(\w+)", value, word), env)


def heredoc_text(redirect: Any, env: Mapping[str, str]) -> str | None:
    """The text a heredoc feeds, or None when it expands what the hook cannot know.

    An unquoted heredoc's `$X` and `$(...)` become part of the text, so a body fed to a shell
    could be any script: `cat <<EOF | sh` with `$(curl ...)` inside is not readable beforehand.
    """
    body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
    if body is None:
        return ""
    start = next((c for c in redirect.named_children if c.type == "heredoc_start"), None)
    if start is not None and re.search(r"['\"\\]", text(start)):
        return text(body)  # `<<'EOF'`: the text as written
    raw = bytes(body.text or b"")
    parts: list[str] = []
    at = body.start_byte
    for child in body.named_children:
        parts.append(
            _unescape_heredoc(raw[at - body.start_byte : child.start_byte - body.start_byte])
        )
        at = child.end_byte
        if child.type == "heredoc_content":
            parts.append(_unescape_heredoc(bytes(child.text or b"")))
            continue
        value = word(child, env) if child.type in ("simple_expansion", "expansion") else None
        if value is None or value == text(child):
            return None
        parts.append(value)
    parts.append(_unescape_heredoc(raw[at - body.start_byte :]))
    return "".join(parts)


def _unescape_heredoc(raw: bytes) -> str:
    # In an unquoted heredoc a backslash escapes only `$`, a backquote, itself and a newline.
    return re.sub(r"\\([$`\\])|\\\n", lambda m: m.group(1) or "", raw.decode("utf-8", "replace"))


def split_outside_quotes(line: str) -> list[str]:
    parts: list[str] = []
    start = i = 0
    quote = ""
    while i < len(line):
        char = line[i]
        if char == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in ";|&\n(){}`":
            parts.append(line[start:i])
            start = i + 1
        i += 1
    parts.append(line[start:])
    return parts
