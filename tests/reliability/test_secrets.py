"""A planted API key, in the environment, in `.env` and in tracked source, goes nowhere:
not into any file the bridge writes, not into any request the manager receives."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import (
    PLANTED_KEY,
    edit_payload,
    git,
    make_repo,
    payload,
    review_body,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import Hook, answer_of, start_loop, state_of
from tests.reviews import wait_reviews


@pytest.fixture
def leaky_repo(tmp_path: Path) -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {
            "README.md": "# demo\n",
            "src/settings.py": f'API_KEY = "{PLANTED_KEY}"\n',
            ".env": f"OPENAI_API_KEY={PLANTED_KEY}\n",
        },
    )
    # And uncommitted, where the diffs the manager reviews come from.
    (repo / ".env.local").write_text(f"OPENAI_API_KEY={PLANTED_KEY}\n")
    (repo / "config").mkdir()
    (repo / "config" / ".env").write_text(f"KEY={PLANTED_KEY}\n")
    return repo


def written_files(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file()]


def test_a_planted_key_reaches_no_file_and_no_request(
    leaky_repo: Path,
    manager: FakeOpenAI,
    hook: Hook,
    isolated: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start_loop(leaky_repo, manager, capsys)

    # The implementer copies the key around: a tracked file, a new file, its own message.
    settings = leaky_repo / "src" / "settings.py"
    settings.write_text(settings.read_text() + f'BACKUP_KEY = "{PLANTED_KEY}"\n')
    (leaky_repo / "src" / "client.py").write_text(f'client = Client(key="{PLANTED_KEY}")\n')
    (leaky_repo / ".env").write_text(f"OPENAI_API_KEY={PLANTED_KEY}\nMORE=1\n")
    # A finding on a file the task changed blocks (one elsewhere would be advisory).
    fix = review_body("fix")
    fix["findings"][0]["file"] = "src/settings.py"
    manager.enqueue(fix, review_body("approve"), schema="Review")
    assert answer_of(hook("PostToolUse", edit_payload(leaky_repo, "src/settings.py"))) == {}
    wait_reviews(leaky_repo)
    git(leaky_repo, "add", "src")
    git(leaky_repo, "commit", "-q", "-m", f"wire the client with {PLANTED_KEY}")
    (leaky_repo / "src" / "extra.py").write_text(f"# {PLANTED_KEY}\n")
    # The next edit's hook hands over the background review's fix.
    out = answer_of(hook("PostToolUse", edit_payload(leaky_repo, "src/extra.py")))
    assert out["decision"] == "block"
    wait_reviews(leaky_repo)

    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    message = f"Done. I set OPENAI_API_KEY={PLANTED_KEY} in src/settings.py."
    assert answer_of(hook("Stop", payload("Stop", leaky_repo, last_assistant_message=message)))
    # Only verdicts from here on (edit mode would review the next task's diff at each Stop).
    monkeypatch.setenv("AUTOPILOT_CODEX_REVIEW", "off")
    # Failed calls whose answers echo the key, as some compatible servers do: an invalid
    # answer (corrected once, then paused) and an error status (paused at once).
    for replies in (
        [Reply(text=f"cannot answer, key {PLANTED_KEY}")] * 2,
        [Reply(status=400, text=f"bad key {PLANTED_KEY}")],
    ):
        manager.enqueue(*replies, schema="Verdict")
        hook("Stop", payload("Stop", leaky_repo, last_assistant_message=message))
        assert state_of(leaky_repo)["status"] == "paused"
        assert main(["-C", str(leaky_repo), "resume", "--session-id", "sess-1"]) == 0
        capsys.readouterr()

    # The manager did see the work, with the key cut out of it.
    prompts = [r.prompt_text for r in manager.requests]
    assert any("src/settings.py" in p and "[REDACTED]" in p for p in prompts)
    assert len(manager.requests_for(schema="Review")) == 2
    assert len(manager.requests_for(schema="Verdict")) == 4
    for request in manager.requests:
        assert PLANTED_KEY not in request.raw_body, request.path
        assert PLANTED_KEY not in request.path
        assert request.headers.get("authorization") == f"Bearer {PLANTED_KEY}"  # only there

    files = written_files(isolated)
    assert any(p.name == "state.json" for p in files)
    assert any(p.name == "events.jsonl" for p in files)
    for path in files:
        assert PLANTED_KEY.encode() not in path.read_bytes(), path.relative_to(isolated)
    # Not even a recognisable part of it, as a stray substring in a clipped log line would be.
    for path in files:
        assert b"PLANTEDKEY" not in path.read_bytes(), path.relative_to(isolated)


def test_an_internal_error_log_carries_no_key(
    planned: Path, hook: Hook, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The crash log holds a traceback: make sure the key is not in one."""
    from autopilot_codex.styles.autopilot import style

    def explode(*_: object) -> str:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(style, "handle", explode)  # the style's hooks, as the registry hands them
    result = hook("Stop", payload("Stop", planned, last_assistant_message=PLANTED_KEY))
    assert (result.code, result.stdout) == (0, "")
    assert "internal error" in result.stderr
    logs = list((isolated / "logs").glob("*"))
    assert logs, "the crash was not logged"
    for path in written_files(isolated):
        assert PLANTED_KEY.encode() not in path.read_bytes(), path.relative_to(isolated)
