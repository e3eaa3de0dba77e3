"""What a tool served by an MCP server names: both hosts call it `mcp__<server>__<tool>`. It
runs in the server's process, outside the wall, and its input is all a hook sees of it: every
string there may be a path it writes, and a command field (with its argv) a line it runs."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

PREFIX = "mcp__"
_COMMAND_KEY = re.compile(r"command|cmd|script|shell|exec", re.I)
_ARGV_KEYS = ("args", "argv", "arguments")


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every object in the input, however deep, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def strings(tool_input: dict[str, Any], most: int) -> list[str]:
    """Every string value (in a list too), at most `most` + 1 of them."""
    found: list[str] = []
    for obj in _objects(tool_input):
        for value in obj.values():
            items = value if isinstance(value, list) else [value]
            found += [v for v in items if isinstance(v, str)]
            if len(found) > most:
                return found
    return found


def commands(tool_input: dict[str, Any]) -> list[str]:
    """The shell lines its command fields spell: a string, or an argv (with `args` beside)."""
    lines: list[str] = []
    for obj in _objects(tool_input):
        for key, value in obj.items():
            if not _COMMAND_KEY.search(key):
                continue
            words = value if isinstance(value, list) else [value]
            if not words or not all(isinstance(w, str) for w in words):
                continue
            line = value if isinstance(value, str) else shlex.join(words)
            extra: list[Any] = next(
                (obj[k] for k in _ARGV_KEYS if isinstance(obj.get(k), list)), []
            )
            line += "".join(f" {shlex.quote(a)}" for a in extra if isinstance(a, str))
            lines.append(line)
    return lines
