"""The index's stat cache, forged: git trusts an entry whose recorded stat matches the file on
disk and never reads the file, so an implementer that can write `.git/index` (a walled session
can: it must stage its work) gives an edited file's entry the stat of the edited file and the
blob of the old one. `git status` and `git diff <base>` then show nothing. Through the real hook
commands: the review must still see the edit, and the checks must run again on the edited tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import struct
import sys
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import (
    Hook,
    git,
    make_repo,
    payload,
    plan_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import review_prompt_of_hidden_edit

HIDDEN = "HIDDEN-BY-A-FORGED-INDEX"
PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
GREEN = "def test_total_is_right():\n    assert 1 + 1 == 2\n"
RED = "def test_total_is_right():\n    assert 1 + 1 == 3\n"
# An hour before the index is written: git reads a file whose mtime is not older than the
# index itself ("racily clean"), so the forger dates the file back first.
PAST_S = 3600


def forge(repo: Path, name: str) -> None:
    """Give `name`'s entry in `.git/index` the stat the file has now, keeping its old blob."""
    os.utime(repo / name, ((repo / name).stat().st_atime - PAST_S,) * 2)
    index = repo / ".git" / "index"
    data = bytearray(index.read_bytes())
    assert data[:4] == b"DIRC" and struct.unpack(">I", data[4:8])[0] == 2
    pos = 12
    for _ in range(struct.unpack(">I", data[8:12])[0]):
        size = struct.unpack(">H", data[pos + 60 : pos + 62])[0] & 0xFFF
        if bytes(data[pos + 62 : pos + 62 + size]) == name.encode():
            st = os.lstat(repo / name)
            stamps = (st.st_ctime_ns, st.st_mtime_ns)
            fields = [f for ns in stamps for f in (ns // 10**9, ns % 10**9)]
            data[pos : pos + 24] = struct.pack(">6I", *fields, st.st_dev, st.st_ino & 0xFFFFFFFF)
            data[pos + 36 : pos + 40] = struct.pack(">I", st.st_size)
        pos += (62 + size + 8) // 8 * 8
    body = bytes(data[:-20])
    index.write_bytes(body + hashlib.sha1(body).digest())  # noqa: S324 - git's own checksum


def test_the_forger_hides_the_edit_from_git_itself(repo: Path) -> None:
    """The control: the forged entry does hide the edit from the user's own git."""
    (repo / "README.md").write_text(f"# {HIDDEN}\n")
    assert git(repo, "status", "--porcelain") != ""
    forge(repo, "README.md")
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "diff", "HEAD") == ""


def test_a_review_sees_an_edit_the_index_says_is_unchanged(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert HIDDEN in review_prompt_of_hidden_edit(repo, manager, forge, HIDDEN)


def test_the_checks_run_again_on_an_edit_the_index_says_is_unchanged(
    tmp_path: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    repo = make_repo(tmp_path / "repo", {"test_calc.py": GREEN})
    manager.enqueue(plan_body(2), schema="Plan")
    args = ["-C", str(repo), "plan", "--session-id", "sess-1", "--review", "off"]
    assert main([*args, "--check", PYTEST, "do it"]) == 0
    capsys.readouterr()
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    stop = payload("Stop", repo, last_assistant_message="T1 done.")
    hook("Stop", stop)
    assert state_of(repo)["last_checks"][0]["status"] == "pass"

    (repo / "test_calc.py").write_text(RED)
    forge(repo, "test_calc.py")
    manager.enqueue(verdict_body("done"), schema="Verdict")
    answer = hook("Stop", stop).json
    assert answer.get("decision") == "block", "a red tree was taken for the green one"
    assert state_of(repo)["last_checks"][0]["status"] == "fail"
    ran = [
        line
        for line in (project_dir(repo) / "events.jsonl").read_text().splitlines()
        if json.loads(line).get("event") == "checks.run"
    ]
    assert len(ran) == 2
