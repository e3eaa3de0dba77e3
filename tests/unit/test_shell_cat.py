"""`cat` passes its input on only when it names no file: `cat FILE <<EOF | sh` runs the file,
which the bridge cannot read, not the heredoc it can."""

from __future__ import annotations

from autopilot_codex.rails import shell

ENV: dict[str, str] = {}


def fed_to_sh(line: str) -> list[tuple[str | None, bool]]:
    return [(c.stdin, c.piped) for c in shell.commands(line, ENV, "/wt") if c.name == "sh"]


def test_a_bare_cat_passes_its_heredoc_on() -> None:
    for line in ("cat <<EOF | sh\necho hi\nEOF", "cat - <<EOF | sh\necho hi\nEOF"):
        assert fed_to_sh(line) == [("echo hi\n", False)]


def test_a_cat_of_a_file_writes_what_the_bridge_cannot_know() -> None:
    # Unknown input, never the heredoc: judging `echo hi` would pass whatever payload.sh holds.
    assert fed_to_sh("cat payload.sh <<EOF | sh\necho hi\nEOF") == [(None, True)]
