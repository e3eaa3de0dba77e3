"""The index's stat cache, forged by a round: git trusts an entry whose recorded stat matches
the file and never reads the file. A verifier round that edits a tracked file, then gives its
entry in `.git/index` the edited file's stat and the old blob (a Claude round can write the
index: it may commit on its own) would make the driver's "the verifier changed nothing" true
to git, so its `::potter(exit)` would end the run on a tree it changed. Through the real
driver and the fake host, as `test_rounds_tamper.py` plays its routes.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.conftest import Script, git
from tests.integration.test_rounds_driver import EXIT, READY, drive, rounds_of

ROOT = Path(__file__).resolve().parents[2]
EDIT = "HIDDEN-BY-A-FORGED-INDEX\n"


def forging(name: str) -> str:
    """The shell step of a round that forges `name`'s index entry (after the round's writes)."""
    code = (
        f"import sys, pathlib; sys.path.insert(0, {str(ROOT)!r}); "
        "from tests.reliability.test_index_stat_attacks import forge; "
        f"forge(pathlib.Path('.'), {name!r})"
    )
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def test_the_forger_hides_the_edit_from_git_itself(repo: Path) -> None:
    """The control: the forged entry does hide the edit from the user's own git."""
    from tests.reliability.test_index_stat_attacks import forge

    (repo / "README.md").write_text(EDIT)
    forge(repo, "README.md")
    assert git(repo, "status", "--porcelain") == ""


def test_a_verifier_that_hides_its_edit_in_the_index_does_not_exit(
    repo: Path, script: Script
) -> None:
    sneaky = {"write": {"hello.txt": EDIT}, "shell": forging("hello.txt"), "say": EXIT["say"]}
    script([READY, sneaky, EXIT])
    code, record = drive(repo)
    r = rounds_of(repo)
    assert r[1].files_changed == ["hello.txt"], "a verifier's edit hidden by the index"
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 3)
    # The driver commits what the round left, the hidden edit included.
    assert git(repo, "show", "HEAD:hello.txt") == EDIT.strip()
