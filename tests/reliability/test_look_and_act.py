"""What the manager judged is what the verdict acts on. A Stop reads the tree (the diff, and the
checks' run), then asks the manager, then applies the answer. A process the implementer left
running (a `nohup`/`setsid` child of an unwalled shell, a check that leaves a daemon, a host's
shell session that outlives its tool call) can change the tree while the manager thinks: a
`done` would then end the loop on a tree no review showed and no check ran on. The bridge
takes the tree's digest as it looks and again as it acts; a tree changed between them
overrules a `done` or a task's advance, as a red check does.

The race is made deterministic: the manager's answer is held until the test's "process" has
acted, and that process acts once the manager's request has arrived."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import (
    Hook,
    Script,
    git,
    payload,
    plan_body,
    review_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI, LoggedRequest, Reply

HIDDEN = "HIDDEN-PAYLOAD-never-reviewed"
# Far past any Stop on a loaded machine: a hang fails the test, no margin passes it.
GENEROUS_S = 120


def _plan(repo: Path, capsys: pytest.CaptureFixture[str], *checks: str) -> None:
    args = ["-C", str(repo), "plan", "--session-id", "sess-1"]
    for check in checks:
        args += ["--check", check]
    assert main([*args, "write", "files"]) == 0
    capsys.readouterr()


def _sent(manager: FakeOpenAI) -> str:
    return "\n".join(r.raw_body for r in manager.requests)


def _while_the_manager_thinks(manager: FakeOpenAI, act: Callable[[], object]) -> Reply:
    """The review's reply, held until `act` (the implementer's left-over process) has run,
    which it does once the Stop's call reached the manager."""
    arrived, release = threading.Event(), threading.Event()
    record = manager._record

    def recorded(req: LoggedRequest) -> None:
        record(req)
        arrived.set()

    manager._record = recorded  # type: ignore[method-assign]

    def left_over() -> None:
        try:
            if arrived.wait(GENEROUS_S):
                act()
        finally:
            release.set()

    threading.Thread(target=left_over, daemon=True).start()
    return Reply(body=review_body("approve"), hold=release)


def _commits_hidden(repo: Path) -> None:
    (repo / "hidden.py").write_text(f"print('{HIDDEN}')\n")
    git(repo, "add", "hidden.py")
    git(repo, "commit", "-q", "-m", "chore: tidy")


def _edits_hidden(repo: Path) -> None:
    (repo / "file1.txt").write_text(f"file1.txt\n{HIDDEN}\n")


def _breaks_the_check(repo: Path) -> None:
    (repo / "ok").unlink()
    git(repo, "commit", "-q", "-am", "chore: tidy")


@pytest.mark.parametrize(
    "act", [_commits_hidden, _edits_hidden, _breaks_the_check], ids=lambda f: f.__name__[1:]
)
def test_a_tree_changed_while_the_manager_judged_it_never_ends_the_loop(
    repo: Path,
    manager: FakeOpenAI,
    hook: Hook,
    capsys: pytest.CaptureFixture[str],
    act: Callable[[Path], None],
) -> None:
    (repo / "ok").write_text("green\n")
    git(repo, "add", "ok")
    git(repo, "commit", "-q", "-m", "test: the check's file")
    manager.enqueue(plan_body(1), schema="Plan")
    _plan(repo, capsys, "test -f ok")
    (repo / "file1.txt").write_text("file1.txt\n")
    git(repo, "add", "file1.txt")
    git(repo, "commit", "-q", "-m", "feat: file1.txt")

    manager.enqueue(_while_the_manager_thinks(manager, lambda: act(repo)), schema="Review")
    manager.enqueue(verdict_body("done", done=True), schema="Verdict")
    out = hook("Stop", payload("Stop", repo)).json

    assert HIDDEN not in _sent(manager)  # the manager judged the tree before the change
    state = state_of(repo)
    assert state["status"] == "running", out
    assert state["autopilot"]["completed_tasks"] == [], state["autopilot"]
    assert out.get("decision") == "block" and "changed" in out["reason"], out

    # The next Stop judges the tree as it is now: the change is shown (committed, as a done
    # hands on HEAD), and the checks rerun.
    if act is _edits_hidden:
        git(repo, "commit", "-q", "-am", "feat: as reviewed")
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("done", done=True), schema="Verdict")
    out = hook("Stop", payload("Stop", repo)).json
    if act is _breaks_the_check:
        assert state_of(repo)["status"] == "running", out
    else:
        assert HIDDEN in _sent(manager)
        assert state_of(repo)["status"] == "done", out


def test_an_unchanged_tree_ends_the_loop_as_before(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: the left-over process writes outside the work tree, and the done stands."""
    outside = repo.parent / "outside.txt"
    manager.enqueue(plan_body(1), schema="Plan")
    _plan(repo, capsys, "true")
    (repo / "file1.txt").write_text("file1.txt\n")
    git(repo, "add", "file1.txt")
    git(repo, "commit", "-q", "-m", "feat: file1.txt")
    manager.enqueue(
        _while_the_manager_thinks(manager, lambda: outside.write_text("elsewhere\n")),
        schema="Review",
    )
    manager.enqueue(verdict_body("done", done=True), schema="Verdict")
    out = hook("Stop", payload("Stop", repo)).json
    assert outside.exists()
    assert state_of(repo)["status"] == "done", out


READY = {"write": {"hello.txt": "hello\n"}, "commit": "add hello", "say": "Done.\n::potter(ready)"}
EXIT = {"say": "Every requirement checked against the files.\n::potter(exit)"}


def test_a_tree_changed_while_the_rounds_manager_judged_it_is_not_accepted(
    repo: Path, script: Script
) -> None:
    """The rounds driver's twin: a verifier's exit is accepted on the manager's word about the
    tree it read; a process a round left running (an unwalled round's `setsid` child) commits
    a change while the manager judges. The run goes on, and the change meets the next verifier."""
    import io

    from autopilot_codex.rounds import driver
    from autopilot_codex.rounds.driver import RunOptions, run
    from autopilot_codex.rounds.view import PlainView

    looked: list[str] = []

    def manager(worktree: Path, base: str) -> bool:
        looked.append(git(worktree, "diff", "--stat", base))
        if len(looked) == 1:  # the left-over process, while the manager reads
            _commits_hidden(worktree)
        return True

    script([READY, EXIT, EXIT, EXIT])
    out = io.StringIO()
    opts = RunOptions(worktree=repo, goal="g", implementer="claude")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(driver, "sleep", lambda _s: None)
        record = run(opts, view=PlainView(out), manager=manager)
    assert record["status"] == "complete", out.getvalue()
    assert "hidden.py" not in looked[0]
    # Not accepted on the first exit: the second verifier's look shows the change.
    assert len(looked) == 2 and "hidden.py" in looked[1], out.getvalue()


def test_a_rounds_run_with_checks_and_a_manager_accepts_an_exit(
    repo: Path, script: Script, manager: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The order of the looks: the checks' digest copies HEAD (a round's commit) into the
    bridge's object store before the manager's diff reads the run's base, HEAD's ancestor. A
    base copied after a descendant must still be copied whole, or every exit is refused as
    "manager unavailable" and the run only ends at its round cap."""
    from autopilot_codex.rounds import driver
    from tests.integration.test_rounds_driver import drive

    monkeypatch.setattr(driver, "sleep", lambda _s: None)
    script([READY, EXIT])
    manager.enqueue(verdict_body("done"), schema="Verdict")
    code, record = drive(repo, "--manager", "openai", "--check", "true")
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 2), record
