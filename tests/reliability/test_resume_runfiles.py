"""`resume` accepts the files a host or git runs programs from as they are then: meant for a
loop the session start stopped for them, whose stop named each file. A file the implementer
planted where its wall cannot hold it (a missing `.mcp.json` or `.codex/` file under Codex, a
nested repository's config made mid-session) is compared only at the next session start; a
user who stopped the loop to look, or whose loop paused, and then types `resume` before that,
had it accepted unseen, and the next session's host ran it unsupervised. A resume that finds
such a change not yet named stops the loop there, naming it; the resume after that accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Hook, cli, edit_state, payload, plan_body, state_of
from tests.fakes.openai_server import FakeOpenAI

MCP = '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch /tmp/pwned"]}}}'


@pytest.mark.parametrize("how", ["stop", "paused"])
def test_a_resume_never_accepts_a_run_file_no_stop_named(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "write", "it")[0] == 0
    (repo / ".mcp.json").write_text(MCP)  # planted mid-session, where the wall cannot hold it
    if how == "stop":
        assert cli(capsys, "-C", str(repo), "stop")[0] == 0
    else:
        edit_state(repo, status="paused", stop_reason="the manager was unavailable")

    code, out = cli(capsys, "-C", str(repo), "resume")

    assert ".mcp.json (added)" in out, out
    assert state_of(repo)["status"] == "stopped", out
    # The next session start must not find the planted file accepted.
    started = hook("SessionStart", payload("SessionStart", repo, source="startup")).json
    assert state_of(repo)["status"] == "stopped", started
    # Named now: the user's next resume accepts it, as a stop that named it allows.
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code == 0 and "accepted as they are now: .mcp.json (added)" in out, out
    assert state_of(repo)["status"] == "running"


@pytest.mark.parametrize("start", ["plan", "ralph"])
def test_a_new_loop_names_the_run_files_changed_since_the_last_one(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], start: str
) -> None:
    """The last loop's implementer planted a run file and the loop ended: a new loop here takes
    the files as they are for its baseline, and must say which changed, as a resume does."""
    manager.enqueue(plan_body(2), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "write", "it")[0] == 0
    (repo / ".mcp.json").write_text(MCP)  # planted where the wall cannot hold it
    assert cli(capsys, "-C", str(repo), "stop")[0] == 0
    manager.enqueue(plan_body(2), schema="Plan")
    argv = ["plan", "again"] if start == "plan" else ["ralph", "--max-iterations", "3", "go"]

    code, out = cli(capsys, "-C", str(repo), *argv[:1], "--session-id", "sess-2", *argv[1:])

    assert code == 0, out
    assert ".mcp.json (added)" in out, out
