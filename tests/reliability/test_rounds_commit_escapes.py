"""A round's final message becomes the subject of the commit the driver makes for it, and a
walled round cannot commit on its own (its git directory is read-only), so that subject is
the one way its text enters the user's history. Control sequences in it (a clipboard write,
OSC 52; a line erased; the title) would then be obeyed by the user's terminal wherever
`git log` prints without a pager that filters them. Through the real driver and the fake
host: the subject keeps the words, with each such character written out as `\\uXXXX`.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Script, git
from tests.integration.test_rounds_driver import EXIT, drive

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
ERASE = "\x1b[1A\x1b[2K"
BIDI = "\u202e"


def test_a_round_s_message_writes_no_control_sequence_into_a_commit(
    repo: Path, script: Script
) -> None:
    said = f"Added hello{CLIPBOARD}{ERASE}{BIDI} and \x9b31m more\n::potter(ready)"
    script([{"write": {"hello.txt": "hello\n"}, "say": said}, EXIT])
    code, record = drive(repo)
    assert (code, record["status"]) == (0, "complete")
    subject = git(repo, "log", "-1", "--format=%s", "--", "hello.txt")
    assert subject.startswith("Added hello"), subject
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == BIDI for c in subject), subject
    assert "\\u001b]52;c;" in subject
