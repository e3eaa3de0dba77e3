"""The words of a shell line as the shell passes them: where a tilde expands, which variable
forms the hook expands, what a heredoc feeds, and how the fallback splits an unparsable line."""

from __future__ import annotations

import pytest

from autopilot_codex.rails import shell
from autopilot_codex.rails.shellwords import expand_text, split_outside_quotes

ENV = {"HOME": "/home/u"}


def argvs(line: str) -> list[tuple[str, ...]]:
    return [c.argv for c in shell.commands(line, ENV, "/wt") if c.argv]


def fed(line: str) -> list[str | None]:
    return [c.stdin for c in shell.commands(line, ENV, "/wt") if c.name in ("cat", "python3")]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # A tilde expands only when the word starts unquoted with it.
        ('rm "~"/x', ("rm", "~/x")),
        ('rm ~/a"b"', ("rm", "/home/u/ab")),
        # `${NAME:-x}` and the like are not read: the word keeps its `$` ("cannot tell").
        ("rm ${HOME:-/tmp}/x", ("rm", "${HOME:-/tmp}/x")),
        ("rm ${HOME}/x", ("rm", "/home/u/x")),
    ],
)
def test_words(line: str, expected: tuple[str, ...]) -> None:
    assert expected in argvs(line), argvs(line)


@pytest.mark.parametrize(
    ("line", "stdin"),
    [
        # An unquoted heredoc expands a known variable wherever it stands in the text...
        ("cat <<EOF\nit's $HOME\nEOF", "it's /home/u\n"),
        ("cat <<EOF\na $HOME b $HOME c\nEOF", "a /home/u b /home/u c\n"),
        # ...and a backslash there escapes `$`, which then stays.
        ("cat <<EOF\nprice \\$5 in $HOME\nEOF", "price $5 in /home/u\n"),
        # A quoted delimiter feeds the text as written.
        ("python3 - <<'EOF'\nprint(\"$HOME\")\nEOF", 'print("$HOME")\n'),
        ("python3 - <<'EOF'\nprint(\"\\$HOME\\\\\")\nEOF", 'print("\\$HOME\\\\")\n'),
    ],
)
def test_heredoc_text(line: str, stdin: str) -> None:
    assert fed(line) == [stdin]


def test_expand_text_reads_both_variable_forms() -> None:
    assert expand_text("$HOME/a ${HOME}/b $NOPE", ENV) == "/home/u/a /home/u/b $NOPE"


@pytest.mark.parametrize(
    ("line", "parts"),
    [
        (";a", ["", "a"]),
        ("a\\;b; c", ["a\\;b", " c"]),
        ("a\\;;b", ["a\\;", "b"]),
        ('x "a;b" ; y', ['x "a;b" ', " y"]),
        ("x 'a\\';b", ["x 'a\\'", "b"]),
    ],
)
def test_the_fallback_splits_outside_quotes_and_escapes(line: str, parts: list[str]) -> None:
    assert split_outside_quotes(line) == parts
