"""The object store, forged: git reads an object by its name and does not check that the
content hashes to it. The implementer writes `.git/objects` (committing is its work), so it can
rewrite the base commit's loose blob of a file with the file's new content; `git diff <base>`
then finds the two equal and shows nothing; a rewritten tree of HEAD's hides a staged edit from
`git status`. Closed: the review and the checks' digest read the base from objects the bridge
copied into the state home, each named by hashing it (gitrepo/basestore.py); a base forged
before the bridge copied it fails loudly instead of reading as unchanged."""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

import pytest

from autopilot_codex import gitrepo
from autopilot_codex.checks import tree as checks_tree
from autopilot_codex.cli import main
from autopilot_codex.errors import BridgeError
from tests.conftest import git, payload, plan_body, run_launcher
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import review_prompt_of_hidden_edit

HIDDEN = "HIDDEN-BY-A-FORGED-OBJECT"


def forge(repo: Path, name: str) -> None:
    """Rewrite the base's loose blob of `name` with the file's content as it is now."""
    blob = git(repo, "rev-parse", f"HEAD:{name}").strip()
    rewrite(repo, blob, b"blob", (repo / name).read_bytes())


def rewrite(repo: Path, name: str, kind: bytes, data: bytes) -> None:
    path = repo / ".git" / "objects" / name[:2] / name[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(kind + b" %d\0" % len(data) + data))


def test_the_forger_hides_the_edit_from_git_itself(repo: Path) -> None:
    (repo / "README.md").write_text(f"# {HIDDEN}\n")
    forge(repo, "README.md")
    assert git(repo, "diff", "HEAD") == ""


def test_a_review_sees_an_edit_whose_base_object_was_rewritten(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert HIDDEN in review_prompt_of_hidden_edit(repo, manager, forge, HIDDEN)


def test_a_base_forged_before_the_bridge_copied_it_fails_loudly(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text(f"# {HIDDEN}\n")
    forge(repo, "README.md")
    with pytest.raises(BridgeError, match="do not hash to their names"):
        gitrepo.diff_since(repo, base)
    with pytest.raises(BridgeError, match="do not hash to their names"):
        gitrepo.changed_names(repo, base)
    # Nothing was taken as copied: it fails again, and keeps failing, rather than trusting it.
    with pytest.raises(BridgeError, match="do not hash to their names"):
        gitrepo.diff_since(repo, base)


def test_the_checks_digest_sees_a_staged_edit_behind_a_rewritten_tree(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "mod.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-qm", "src")
    before = checks_tree.tree_hash(repo)
    assert before
    # git checks the hash of HEAD's root tree when it parses it, not of a folder's tree.
    tree = git(repo, "rev-parse", "HEAD:src").strip()
    (repo / "src" / "mod.py").write_text(f"x = '{HIDDEN}'\n")
    git(repo, "add", "src")
    staged = git(repo, "write-tree").strip()
    rewrite(repo, tree, b"tree", git_bytes(repo, "cat-file", "tree", f"{staged}:src"))
    assert git(repo, "status", "--porcelain") == ""  # git itself is fooled
    assert checks_tree.tree_hash(repo) != before


def test_a_head_forged_before_the_first_digest_gives_no_digest(repo: Path) -> None:
    (repo / "README.md").write_text(f"# {HIDDEN}\n")
    forge(repo, "README.md")
    assert checks_tree.tree_hash(repo) == ""


def git_bytes(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def test_a_stop_over_a_base_forged_before_the_plan_answers_and_names_it(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    blob = git(repo, "rev-parse", "HEAD:README.md").strip()
    rewrite(repo, blob, b"blob", f"# {HIDDEN}\n".encode())  # the work tree keeps its file
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "g"]) == 0
    capsys.readouterr()
    hook = run_launcher(
        ["hook", "Stop", "--host", "claude"], json.dumps(payload("Stop", repo)).encode()
    )
    assert hook.code == 0, hook.stderr
    assert "do not hash to their names" in hook.stdout + hook.stderr
    assert not manager.requests_for(schema="Verdict")
