"""File names of arbitrary bytes through every reader of the work tree: the review, the Stop,
the checks' digest, the rounds' snapshot and commit.

Names carry spaces, newlines, tabs, quotes, invalid UTF-8, pathspec magic, option-like
dashes and the words git prints in its own output (`diff --git`, `# branch.oid`, `? `). Each
reader must neither crash nor mis-parse: every file made is named by the review with its
content, changes the checks' digest and the snapshot, and the Stop reaches the manager.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autopilot_codex import gitrepo
from autopilot_codex.checks.tree import tree_hash
from autopilot_codex.cli import main
from autopilot_codex.gitrepo import review
from autopilot_codex.rails.secrets import is_secret_path
from autopilot_codex.rounds.commit import commit_round
from autopilot_codex.rounds.tree import changed_between, snapshot
from tests.conftest import Hook, git, make_repo, payload, plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

NASTY = (
    b"with space.txt",
    b"new\nline.txt",
    b"tab\there.txt",
    b'"quoted".txt',
    b"back\\slash.txt",
    b"\xff\xfeinvalid.txt",
    b"caf\xc3\xa9.txt",
    b"\r",
    b"-rf",
    b"--output=x",
    b":(exclude)a",
    b":(top)*",
    b"*",
    b"HEAD",
    b"diff --git a b",
    b"# branch.oid 0000000000000000000000000000000000000000",
    b"1 .M N... 100644 100644 100644 a b c",
    b"? x",
    b"\x1b[31mred",
)

names = st.binary(min_size=1, max_size=24).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..", b".git")
)

FUZZ = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _template(root: Path) -> Path:
    """A repository with a tracked file of every nasty name and a nested clone under vendor/."""
    dep = make_repo(root / "dep", {"lib.py": "x = 1\n"})
    top = make_repo(root / "template", {"README.md": "# top\n"})
    for name in NASTY:
        (top / os.fsdecode(b"tracked-" + name)).write_bytes(b"before\n")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "nasty names")
    git(top, "clone", "-q", str(dep), "vendor/dep")
    return top


def _through_every_reader(template: Path, work: Path, batch: list[bytes]) -> None:
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(template, work / "top", symlinks=True)
    top = work / "top"
    baseline = work / "nested.json"
    gitrepo.record_nested(top, baseline)
    base = gitrepo.head_sha(top)
    digest, snap = tree_hash(top), snapshot(top)
    made = []
    for n, raw in enumerate(batch):
        for prefix in (b"", b"vendor/dep/"):
            name = os.fsdecode(prefix + raw)
            (top / name).write_bytes(f"CONTENT-{n}\n".encode())
            made.append(name)
        tracked = os.fsdecode(b"tracked-" + raw)
        if (top / tracked).exists():
            # Flagged so git's diff skips it: read from disk and named among the findings.
            git(top, "update-index", "--skip-worktree", "--", tracked)
            (top / tracked).write_bytes(f"AFTER-{n}\n".encode())
            made.append(tracked)
    diff = gitrepo.diff_since(top, base, baseline=baseline)
    # Named as the manager reads them: bytes that are not UTF-8 as `\xff` escapes.
    named = {review.shown(m) for m in made if not is_secret_path(m)}
    assert named <= set(diff.files)
    outside = {n for n in named if not n.startswith("vendor/")}
    assert outside <= set(gitrepo.changed_names(top, base))
    # Nothing a JSON encoder or an HTTP client would refuse, in the text or the findings.
    "\n".join([diff.text, *diff.files, *(f.line() for f in diff.findings)]).encode("utf-8")
    for n in range(len(batch)):
        assert f"CONTENT-{n}" in diff.text
    assert tree_hash(top) != digest
    after = snapshot(top)
    assert after != snap
    changed = changed_between(top, snap, after)
    assert "vendor/dep" in changed
    assert {m for m in made if not m.startswith("vendor/")} <= set(changed)
    commit_round(top, "round", 1, "run-1")
    assert tree_hash(top) != digest


def test_every_nasty_name_is_read_by_every_reader(tmp_path: Path) -> None:
    template = _template(tmp_path)
    _through_every_reader(template, tmp_path / "work", [*NASTY])


@FUZZ
@given(batch=st.lists(names, min_size=1, max_size=4, unique=True))
def test_names_of_arbitrary_bytes_are_read_by_every_reader(
    tmp_path_factory: pytest.TempPathFactory, batch: list[bytes]
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    _through_every_reader(_template(root), root / "work", batch)


def test_the_stop_reviews_nasty_names_and_reaches_the_manager(
    tmp_path: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    top = _template(tmp_path)
    manager.enqueue(plan_body(1), schema="Plan")
    argv = ["-C", str(top), "plan", "--include-dirty", "--review", "stop", "--check", "true"]
    assert main([*argv, "--session-id", "sess-1", "goal"]) == 0
    for n, raw in enumerate(NASTY):
        (top / os.fsdecode(raw)).write_bytes(f"CONTENT-{n}\n".encode())
        (top / os.fsdecode(b"vendor/dep/" + raw)).write_bytes(f"INSIDE-{n}\n".encode())
    manager.enqueue(review_body("fix"), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    run = hook("Stop", payload("Stop", top))
    out = run.json
    assert out.get("decision") == "block", (run.stderr, (top.parent / "home").exists())
    asked = str(manager.requests[-1].body)
    for n in range(len(NASTY)):
        assert f"CONTENT-{n}" in asked and f"INSIDE-{n}" in asked
