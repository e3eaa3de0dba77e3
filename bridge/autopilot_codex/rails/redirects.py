"""What a command's redirections name: the files it opens, and what reaches its standard input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .shellwords import heredoc_text, word
from .shellwords import opaque as is_opaque


def targets(redirects: list[Any], env: Mapping[str, str]) -> tuple[list[str], str | None, bool]:
    """The files redirected to, what is known to reach stdin, and whether stdin is a heredoc
    whose text the hook cannot know."""
    found: list[str] = []
    fed: str | None = None
    opaque = False
    for redirect in redirects:
        if redirect.type == "file_redirect":
            dest = redirect.child_by_field_name("destination")
            if dest is not None:
                found.append(word(dest, env))
        elif redirect.type == "herestring_redirect":
            parts = redirect.named_children
            # Like a heredoc: what it expands from data cannot be known, nor read as a script.
            opaque = any(is_opaque(p, env) for p in parts)
            fed = None if opaque else " ".join(word(p, env) for p in parts) + "\n"
        elif redirect.type == "heredoc_redirect":
            fed = heredoc_text(redirect, env)
            opaque = fed is None
            for inner in redirect.named_children:
                if inner.type == "file_redirect":
                    more, _, _ = targets([inner], env)
                    found += more
    return found, fed, opaque


def stdin_from_file(redirects: list[Any]) -> bool:
    """Does one of these redirections give the standard input a file (`< f`, `0<f`, `<&3`)?"""
    for redirect in redirects:
        if redirect.type != "file_redirect" or redirect.child_by_field_name("descriptor"):
            continue
        if any(c.type in ("<", "<&", "<>") for c in redirect.children):
            return True
    return False
