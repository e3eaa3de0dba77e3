"""The adversarial corpus: every route of the issue's classes, each with the effect it must not
have, and harmless look-alikes that must keep working. Every row goes through the real hook
command (`bin/autopilot-codex hook <Event> --host claude`, a subprocess with a JSON payload on
stdin); the rows live in `adversarial_routes.py`.

Rows that only read the rails share one planned loop per module; rows that change the loop's
files or the repository get a fresh loop each.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.config import config_file
from autopilot_codex.sandbox import jail
from tests.conftest import (
    GIT_ENV,
    PLANTED_KEY,
    edit_payload,
    git,
    make_repo,
    payload,
    plan_body,
    review_body,
    run_launcher,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability import adversarial_routes as routes
from tests.reliability.adversarial_forgeries import FORGE_ROUTES
from tests.reliability.adversarial_lookalikes import HARMLESS_COMMANDS, HARMLESS_PUSH
from tests.reliability.adversarial_routes import (
    FORCE_PUSH,
    PLAIN_SECRET,
    SECRET,
    Command,
    Forge,
    Review,
    Silence,
    canary_path,
)
from tests.reliability.conftest import events_of, start_loop, state_of
from tests.reliability.test_git_attacks import _canary
from tests.reviews import review_requests, wait_reviews

REVIEWS = routes.GIT_ROUTES + routes.PYTHON_ROUTES + routes.UNSEEN_ROUTES
DENIED = routes.CD_ROUTES + routes.NESTED_ROUTES + routes.RAILS_FILES_ROUTES
ATTACKS: list[Any] = [*REVIEWS, *DENIED, *routes.SILENCE_ROUTES, *FORGE_ROUTES]
HARMLESS_REVIEWS = [
    Review(
        "look-alike",
        "a .gitattributes that marks images binary",
        routes._attributes(".gitattributes", "*.png binary\n", "MARKER-attr-ok"),
        "MARKER-attr-ok",
    ),
    Review(
        "look-alike",
        "a nested clone in vendor/",
        lambda r, mp: _vendor_clone(r),
        "MARKER-vendor-ok",
    ),
    Review("look-alike", "a committed submodule", lambda r, mp: _submodule(r), "MARKER-sub-ok"),
    Review(
        "look-alike",
        "an edit reviewed by the worker",
        lambda r, mp: _write(r / "file1.txt", "MARKER-worker-ok\n"),
        "MARKER-worker-ok",
        worker=True,
    ),
    Review(
        "look-alike",
        "a symlink inside the tree",
        lambda r, mp: (r / "MARKER-link-ok").symlink_to("README.md"),
        "MARKER-link-ok",
    ),
]


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _vendor_clone(repo: Path) -> None:
    source = make_repo(repo.parent / "upstream-vendor", {"lib.py": "x = 1\n"})
    git(repo, "clone", "-q", str(source), "vendor/dep")
    (repo / "README.md").write_text("# MARKER-vendor-ok\n")


def _submodule(repo: Path) -> None:
    source = make_repo(repo.parent / "upstream-sub", {"lib.py": "x = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "dep")
    (repo / "README.md").write_text("# MARKER-sub-ok\n")


def hook(event: str, data: dict[str, Any], cwd: Path) -> dict[str, Any]:
    out = run_launcher(["hook", event, "--host", "claude"], json.dumps(data).encode(), cwd=cwd)
    assert out.code == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    answer: dict[str, Any] = json.loads(out.stdout) if out.stdout.strip() else {}
    return answer


def tool_call(row: Command, repo: Path, session: str = "sess-1") -> dict[str, Any]:
    cwd = repo / row.cwd
    if row.tool == "Bash":
        tool_input: dict[str, Any] = {"command": row.command}
    else:
        home = os.environ["HOME"]
        path = row.path.replace("~", home, 1) if row.path.startswith("~") else str(repo / row.path)
        tool_input = {"file_path": path, "content": row.content}
    data = payload("PreToolUse", cwd, session, tool_name=row.tool, tool_input=tool_input)
    return hook("PreToolUse", data, cwd)


def denied(answer: dict[str, Any]) -> bool:
    specific = answer.get("hookSpecificOutput")
    return isinstance(specific, dict) and specific.get("permissionDecision") == "deny"


def force_push_denied(repo: Path, cwd: str = ".", session: str = "sess-1") -> bool:
    return denied(tool_call(Command("", "", FORCE_PUSH, cwd=cwd), repo, session))


def test_the_corpus_is_large_enough() -> None:
    assert len(ATTACKS) >= 60
    assert len(HARMLESS_COMMANDS) + len(HARMLESS_PUSH) + len(HARMLESS_REVIEWS) >= 30
    assert len({(r.cls, r.name) for r in ATTACKS}) == len(ATTACKS)
    classes = {r.cls for r in ATTACKS} | {routes.ROUNDS}  # rounds rows are below
    assert len(classes) == 8


# -- rows that read the rails only: one loop for the module ------------------------------------


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("adversarial")
    user_home = root / "user-home"
    env = {
        **GIT_ENV,
        "HOME": str(user_home),
        "AUTOPILOT_CODEX_HOME": str(user_home / ".autopilot-codex"),
        "OPENAI_API_KEY": PLANTED_KEY,
    }
    with pytest.MonkeyPatch.context() as patch, FakeOpenAI() as server:
        for var in list(os.environ):
            if var.startswith(("AUTOPILOT_CODEX_", "OPENAI_", "CLAUDE")):
                patch.delenv(var)
        for key, value in {**env, "OPENAI_BASE_URL": server.base_url}.items():
            patch.setenv(key, value)
        repo = make_repo(root / "repo")
        (repo / "sub" / ".git").mkdir(parents=True)
        (repo / "src").mkdir()
        upstream = make_repo(root / "upstream")
        subprocess.run(["git", "clone", "-q", str(upstream), str(repo / "vendor/lib")], check=True)
        make_repo(repo / "modules" / "part")
        server.enqueue(plan_body(2), schema="Plan")
        assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "the", "goal"]) == 0
    yield {**env, "repo": str(repo)}


@pytest.fixture
def loop(shared: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in shared.items():
        if key != "repo":
            monkeypatch.setenv(key, value)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # these rows never reach the manager
    return Path(shared["repo"])


@pytest.mark.parametrize("row", DENIED, ids=lambda r: f"{r.cls}: {r.name}")
@pytest.mark.parametrize("session", ["sess-1", "another-session"])
def test_the_route_is_denied(loop: Path, row: Command, session: str) -> None:
    assert denied(tool_call(row, loop, session)), f"{row.cls}: {row.name} was allowed"


@pytest.mark.parametrize("row", HARMLESS_COMMANDS, ids=lambda r: r.name)
def test_a_look_alike_is_allowed(loop: Path, row: Command) -> None:
    assert tool_call(row, loop) == {}, row.name


@pytest.mark.parametrize("row", HARMLESS_PUSH, ids=lambda r: r.name)
def test_a_push_the_config_allows_is_allowed(
    loop: Path, monkeypatch: pytest.MonkeyPatch, row: Command
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_ALLOW_PUSH", "1")
    assert tool_call(row, loop) == {}, row.name
    assert force_push_denied(loop)  # pushing allowed is never force pushing allowed


# -- rows that change the loop or the repository: a loop each ----------------------------------


@pytest.fixture
def fresh(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], request: Any
) -> Path:
    row = request.node.callspec.params["row"]
    extra = ("--review", "edit") if getattr(row, "worker", False) else ()
    return start_loop(repo, manager, capsys, *extra)


def _reviewed(row: Review, repo: Path, manager: FakeOpenAI, mp: pytest.MonkeyPatch) -> str:
    """Plant, change a file, let the bridge review; the review text sent to the manager."""
    ran = repo.parent / "canary.log"
    _canary(canary_path(repo), ran)
    (repo / "file1.txt").write_text("the task's own edit\n")
    row.plant(repo, mp)
    manager.enqueue(review_body(), schema="Review")
    if row.worker:
        hook("PostToolUse", edit_payload(repo), repo)
        wait_reviews(repo)
    else:
        manager.enqueue(verdict_body(), schema="Verdict")
        answer = hook("Stop", payload("Stop", repo), repo)
        assert answer.get("decision") == "block", answer  # the loop goes on
    assert not ran.exists(), f"{row.name}: the planted program ran: {ran.read_text()}"
    assert not list(ran.parent.glob("canary.sh.*")), f"{row.name}: a planted module was imported"
    # The call that reviewed the diff: the worker's, or the Stop's folded review and verdict.
    (request,) = review_requests(manager)
    assert SECRET not in request.raw_body and PLANTED_KEY not in request.raw_body
    assert PLAIN_SECRET not in request.raw_body
    return request.prompt_text


@pytest.mark.parametrize("row", REVIEWS, ids=lambda r: f"{r.cls}: {r.name}")
def test_the_bridge_runs_nothing_planted_and_sees_the_change(
    fresh: Path, manager: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, row: Review
) -> None:
    text = _reviewed(row, fresh, manager, monkeypatch)
    assert "file1.txt" in text  # the task's own edit is reviewed too (by name when too large)
    if row.marker:
        assert row.marker in text, f"{row.name}: the hidden change never reached the review"


@pytest.mark.parametrize("row", HARMLESS_REVIEWS, ids=lambda r: r.name)
def test_a_harmless_change_is_reviewed_as_usual(
    fresh: Path, manager: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, row: Review
) -> None:
    text = _reviewed(row, fresh, manager, monkeypatch)
    assert row.marker and row.marker in text
    assert state_of(fresh)["status"] == "running"
    names = [e["event"] for e in events_of(fresh)]
    assert "state.tampered" not in names and "git_tamper" not in names


@pytest.mark.parametrize("row", routes.SILENCE_ROUTES, ids=lambda r: f"{r.cls}: {r.name}")
def test_the_loop_never_goes_silent(fresh: Path, manager: FakeOpenAI, row: Silence) -> None:
    manager.enqueue(verdict_body(), schema="Verdict")  # for a Stop that still drives the loop
    held = row.act(fresh)
    try:
        if not isinstance(held, routes.Held):  # a Stop waits for the lock, by design
            answer = hook("Stop", payload("Stop", fresh / row.cwd), fresh / row.cwd)
            if row.cwd != ".":  # from inside a nested `.git`, the owner's Stop still drives
                assert answer.get("decision") == "block", answer
        assert force_push_denied(fresh, row.cwd)
        assert force_push_denied(fresh, row.cwd, session="nested-session")
    finally:
        if isinstance(held, routes.Held):
            os.close(held.fd)


@pytest.mark.parametrize("row", FORGE_ROUTES, ids=lambda r: f"{r.cls}: {r.name}")
def test_a_forged_value_never_sticks(fresh: Path, manager: FakeOpenAI, row: Forge) -> None:
    from autopilot_codex.errors import StateCorrupt
    from autopilot_codex.store import Store

    row.forge(fresh)
    manager.enqueue(verdict_body(), schema="Verdict")
    answer = hook("Stop", payload("Stop", fresh), fresh)
    assert answer.get("decision") != "block", answer  # a tampered loop drives nothing
    assert "state.tampered" in [e["event"] for e in events_of(fresh)]
    hook("PostToolUse", payload("PostToolUse", fresh, tool_name="Read"), fresh)
    try:
        state = Store(fresh).load()
    except StateCorrupt:
        state = None
    if state is not None:
        assert state.status != "running"
        if row.key == "acceptance":
            assert state.plan is not None and state.plan.tasks[0].acceptance != row.forged
        else:
            assert getattr(state, row.key) != row.forged
    assert manager.requests_for(schema="Verdict") == []
    assert force_push_denied(fresh)


# -- rounds and checks: through the driver and the ralph Stop ----------------------------------


def test_a_round_s_planted_hook_never_runs_and_its_objective_is_put_back(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.test_rounds_driver import EXIT, FAKE, READY, drive
    from tests.reliability.test_rounds_tamper import FORGED, handoff_of

    script = tmp_path / "script.json"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))}"
    monkeypatch.setenv("AUTOPILOT_CODEX_CLAUDE_CMD", command)
    monkeypatch.setenv("FAKE_HOST_SCRIPT", str(script))
    canary = tmp_path / "round-canary"
    dump = tmp_path / "environ"
    hook_text = f"#!/bin/sh\ntouch {canary}\n"
    rewrite = (
        "import pathlib; p = next(pathlib.Path('.autopilot-codex/handoffs').glob('*.md')); "
        f"p.write_text(p.read_text().replace('add the greeting files', {FORGED!r}))"
    )
    shell = (
        f"printf %s {shlex.quote(hook_text)} > .git/hooks/pre-commit"
        " && chmod +x .git/hooks/pre-commit"
        f" && git config core.fsmonitor {shlex.quote(str(routes.canary_path(repo)))}"
        f" && python3 -c {shlex.quote(rewrite)} && cat /proc/self/environ > {dump}"
    )
    _canary(routes.canary_path(repo), canary)
    script.write_text(
        json.dumps([{"write": READY["write"], "say": READY["say"], "shell": shell}, EXIT])
    )
    code, record = drive(repo)
    # The planted hook and config end the run before the next round (`hostfiles`), named.
    assert (code, record["status"]) == (1, "tampered")
    assert ".git/hooks/pre-commit (added)" in record["why"]
    assert not canary.exists()  # neither the round's pre-commit nor its fsmonitor ran
    assert FORGED not in handoff_of(repo).read_text()
    assert PLANTED_KEY.encode() not in dump.read_bytes()


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("a check hunting for the key", "grep -c PLANTEDKEY /proc/self/environ && exit 1; exit 7"),
        ("a check that allows every command", 'printf \'{"rails_allow": [".*"]}\' > {config}'),
    ],
)
def test_a_check_gets_no_key_and_keeps_no_forged_config(
    repo: Path, capsys: pytest.CaptureFixture[str], name: str, check: str
) -> None:
    config = config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('{"allow_push": false}\n')
    check = check.replace("{config}", shlex.quote(str(config)))
    args = ["-C", str(repo), "ralph", "--completion-promise", "GREEN", "--check", check]
    assert main([*args, "--session-id", "sess-1", "Make it so."]) == 0
    capsys.readouterr()
    stop = payload("Stop", repo, last_assistant_message="Done.\n<promise>GREEN</promise>")
    answer = hook("Stop", stop, repo)
    # Unwalled, the forged config is put back and the check fails: the loop goes on. Walled,
    # the write lands in the sandbox's own /tmp (where this test keeps its state home), never
    # in the config, and the check may pass.
    walled_write = "rails_allow" in check and jail.probe().ok
    if not walled_write:
        assert answer.get("decision") == "block"
    (result,) = state_of(repo)["last_checks"]
    assert PLANTED_KEY not in json.dumps(result)
    if "exit 7" in check:
        assert "exit 7" in json.dumps(result) or result.get("exit_code") == 7
    assert config.read_text() == '{"allow_push": false}\n'
    if not walled_write:  # walled, the check passed and the loop ended done
        assert force_push_denied(repo)
