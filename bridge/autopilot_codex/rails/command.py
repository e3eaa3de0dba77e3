"""One simple command as the shell would run it: what the rules judge."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .shellwords import printf


@dataclass(frozen=True)
class Command:
    """One simple command as it would run, after its wrappers are removed."""

    argv: tuple[str, ...]
    # The source text, for the user's allow and deny patterns.
    text: str
    cwd: str
    # Variables this command sets, exports or unsets, for itself or for the rest of the line.
    assigned: tuple[str, ...] = ()
    # Variables it expands, wherever in its words.
    expands: tuple[str, ...] = ()
    # Files it redirects from or to.
    redirects: tuple[str, ...] = ()
    # What is known to reach its standard input: a heredoc, a here-string, `echo ... |`.
    stdin: str | None = None
    # Wrappers removed to reach argv (`env`, `sudo`, `sh -c`), outermost first.
    wrappers: tuple[str, ...] = ()
    # A shell nested past MAX_DEPTH, or a command behind more than shellwrap.MAX_STEPS wrappers:
    # not read, so it cannot be judged.
    too_deep: bool = False
    # It reads the output of an earlier pipeline stage (known or not).
    piped: bool = False
    # Its standard input is a file it names (`< f`): neither a pipe nor the terminal.
    stdin_file: bool = False
    # Why the program it runs cannot be named before it runs (`unknown`), or "".
    unknown: str = ""

    @property
    def name(self) -> str:
        return self.argv[0] if self.argv else ""

    @property
    def reads_later(self) -> bool:
        """Nothing on the line gives its standard input (no pipe, heredoc or file): it is the
        tool's, a terminal another tool types into after the line was judged (Codex's
        `write_stdin`, which no hook sees)."""
        return self.stdin is None and not self.piped and not self.stdin_file


def output_of(command: Command | None) -> str | None:
    """What a command is known to write: its words if it echoes, else its known input."""
    if command is None:
        return None
    if command.name in ("echo", "printf") and any(c in w for w in command.argv for c in "$`"):
        # What the shell expanded cannot be known, and a shell reading it parses it again.
        return None
    if command.name == "printf":  # a format it cannot follow prints what cannot be known
        return printf(list(command.argv[1:]))
    if command.name == "echo":
        flags = "".join(w for w in command.argv[1:] if re.fullmatch(r"-[neE]+", w))
        words = [w for w in command.argv[1:] if not re.fullmatch(r"-[neE]+", w)]
        said = " ".join(words[1:] if words[:1] == ["--"] else words) + "\n"
        # `echo -e 'git\x20push'` prints what its escapes spell.
        return printf([said.replace("%", "%%")]) if "e" in flags else said
    if command.name == "cat" and len(command.argv) == 1:
        return command.stdin
    return None
