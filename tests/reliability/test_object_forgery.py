"""The object store, forged: git reads an object by its name and does not check that the
content hashes to it. The implementer writes `.git/objects` (committing is its work), so it can
rewrite the base commit's loose blob of a file with the file's new content; `git diff <base>`
then finds the two equal and shows nothing. Open: the review still reads the base through the
user's object store (a pack is read before a loose object, so a packed base needs a forged
pack). The fix named in docs/security.md: read the base from objects kept in the state home,
or check the hashes of the objects the review reads."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import edit_payload, git, plan_body, review_body, run_launcher
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import wait_reviews

HIDDEN = "HIDDEN-BY-A-FORGED-OBJECT"


def forge(repo: Path, name: str) -> None:
    """Rewrite the base's loose blob of `name` with the file's content as it is now."""
    blob = git(repo, "rev-parse", f"HEAD:{name}").strip()
    path = repo / ".git" / "objects" / blob[:2] / blob[2:]
    data = (repo / name).read_bytes()
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(data) + data))


def test_the_forger_hides_the_edit_from_git_itself(repo: Path) -> None:
    (repo / "README.md").write_text(f"# {HIDDEN}\n")
    forge(repo, "README.md")
    assert git(repo, "diff", "HEAD") == ""


@pytest.mark.xfail(strict=True, reason="open: the review trusts the user's object store")
def test_a_review_sees_an_edit_whose_base_object_was_rewritten(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--review", "edit", "--session-id", "sess-1", "g"]) == 0
    capsys.readouterr()
    (repo / "README.md").write_text(f"# {HIDDEN}\n")
    forge(repo, "README.md")
    manager.enqueue(review_body(), schema="Review")
    hook = run_launcher(
        ["hook", "PostToolUse", "--host", "claude"],
        json.dumps(edit_payload(repo, "README.md")).encode(),
    )
    assert hook.code == 0, hook.stderr
    wait_reviews(repo)
    requests = manager.requests_for(schema="Review")
    assert requests and HIDDEN in requests[0].prompt_text
