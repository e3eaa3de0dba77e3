"""The `codex` manager backend: the real, pinned Codex CLI pointed at the fake OpenAI server.

Codex reaches the fake through a custom `model_provider` in a fresh `CODEX_HOME`; nothing
leaves 127.0.0.1 (plugins, whose start-up lookups are the only outside traffic, are off in
every manager run).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel

from autopilot_codex.config import Config
from autopilot_codex.manager import codex_backend, select
from autopilot_codex.manager.codex_backend import NOT_INSTALLED, NOT_LOGGED_IN, CodexManager
from autopilot_codex.manager.pricing import Usage, cost_usd, estimate_tokens, price_for
from autopilot_codex.manager.schemas import Judgement, Plan, Review, Verdict
from tests.conftest import plan_body, review_body, verdict_body
from tests.e2e.codex_cli import CODEX_VERSION, CodexInstallError, ensure_codex
from tests.fakes.openai_server import FakeOpenAI, Reply

KEY_VAR = "FAKE_OPENAI_API_KEY"
CONFIG_MODEL = "gpt-5.5"  # a slug Codex bundles; the fake answers whatever is asked
ONE_ATTEMPT = Usage(input_tokens=1000, output_tokens=200)


@pytest.fixture(scope="session")
def codex_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return ensure_codex()
    except (CodexInstallError, OSError, subprocess.SubprocessError) as exc:
        message = f"Codex CLI {CODEX_VERSION} is unavailable for the codex manager tests: {exc}"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)  # the summary lists it (-ra)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv(KEY_VAR, "sk-fake-codex-key")
    # Scratch directories land here, so a leftover child is easy to find.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    return home


@pytest.fixture
def codex(
    codex_binary: Path,
    codex_home: Path,
    fake: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """`codex` on PATH, configured to talk to `fake`; returns CODEX_HOME."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "codex").symlink_to(codex_binary)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    (codex_home / "config.toml").write_text(
        f'model = "{CONFIG_MODEL}"\n'
        'model_provider = "fake"\n'
        "\n[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{fake.base_url}"\n'
        f'env_key = "{KEY_VAR}"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "\n[analytics]\nenabled = false\n"
    )
    return codex_home


def make(model: str | None = None, timeout: float = 60.0) -> CodexManager:
    return CodexManager(model=model, timeout_s=timeout)


@pytest.mark.parametrize(
    ("schema", "body"),
    [
        (Plan, plan_body(3)),
        (Review, review_body("fix")),
        (Verdict, verdict_body("done")),
        (Judgement, {"review": review_body("fix"), "verdict": verdict_body("done")}),
    ],
)
def test_plan_review_and_verdict_are_answered(
    codex: Path, fake: FakeOpenAI, schema: type[BaseModel], body: dict[str, object]
) -> None:
    fake.enqueue(Reply(body=body, cached_tokens=400))
    outcome = codex_backend.make(Config.model, Config()).ask(
        schema, "MANAGER-INSTRUCTIONS", "PROMPT-TEXT"
    )
    assert outcome.ok, outcome.error
    assert outcome.value == schema.model_validate(body)
    usage = Usage(input_tokens=1000, cached_tokens=400, output_tokens=200)
    assert outcome.usage == usage
    # No `-m` for the loop's default model: Codex's own model is used, and priced.
    assert outcome.cost_usd == pytest.approx(cost_usd(usage, price_for(CONFIG_MODEL)))
    (request,) = fake.requests
    assert request.body is not None and request.body["stream"] is True
    assert request.body["model"] == CONFIG_MODEL
    fmt = request.body["text"]["format"]  # type: ignore[index]
    assert fmt["strict"] is True and fmt["schema"] == to_strict_json_schema(schema)
    assert "MANAGER-INSTRUCTIONS" in request.prompt_text
    assert "PROMPT-TEXT" in request.prompt_text


def test_the_run_is_a_lean_judge(codex: Path, fake: FakeOpenAI) -> None:
    """Codex's coding-agent prompt and its shell are replaced: the manager only judges."""
    fake.enqueue(plan_body())
    assert make().ask(Plan, "i", "p").ok
    body = fake.requests[0].body
    assert body is not None
    first = body["input"][0]  # type: ignore[index]
    assert first["role"] == "developer"
    assert first["content"][0]["text"] == codex_backend.SYSTEM
    tools = {t.get("name") or t.get("type") for t in body["tools"]}  # type: ignore[attr-defined]
    assert not tools & {"exec_command", "shell", "web_search", "view_image"}
    assert "<environment_context>" not in fake.requests[0].raw_body


@pytest.mark.parametrize("schema", [Plan, Review, Verdict, Judgement])
def test_the_budgeted_overhead_covers_what_codex_sends(
    codex: Path, fake: FakeOpenAI, schema: type[BaseModel]
) -> None:
    """The worst case adds `OVERHEAD_CHARS` to our prompt: Codex's request, minus the
    prompt, must fit in it (the schema, its tools, its framing)."""
    fake.enqueue(
        plan_body() if schema is Plan else review_body() if schema is Review else verdict_body()
    )
    make().ask(schema, "i", "p")
    sent = len(fake.requests[0].raw_body)
    print(f"{schema.__name__}: codex sent {sent} characters around a 3-character prompt")
    assert sent <= codex_backend.OVERHEAD_CHARS


def test_a_chosen_model_is_passed_and_priced(codex: Path, fake: FakeOpenAI) -> None:
    fake.enqueue(plan_body())
    outcome = codex_backend.make("gpt-5.4-mini", Config()).ask(Plan, "i", "p")
    assert outcome.ok, outcome.error
    assert fake.requests[0].body is not None and fake.requests[0].body["model"] == "gpt-5.4-mini"
    assert outcome.cost_usd == pytest.approx(cost_usd(ONE_ATTEMPT, price_for("gpt-5.4-mini")))


def test_a_fenced_answer_is_accepted(codex: Path, fake: FakeOpenAI) -> None:
    fake.enqueue(Reply(text="```json\n" + json.dumps(verdict_body()) + "\n```"))
    outcome = make().ask(Verdict, "i", "p")
    assert outcome.value == Verdict.model_validate(verdict_body())


def test_a_non_json_answer_gets_one_corrective_retry(codex: Path, fake: FakeOpenAI) -> None:
    fake.enqueue(Reply(text="not json at all"), Reply(body=review_body("approve")))
    outcome = make().ask(Review, "i", "p")
    assert outcome.ok, outcome.error
    assert outcome.attempts == 2
    assert len(fake.requests) == 2
    assert "the answer was not JSON" in fake.requests[1].prompt_text
    assert outcome.usage == ONE_ATTEMPT + ONE_ATTEMPT  # the unusable answer is charged too
    assert outcome.cost_usd == pytest.approx(2 * cost_usd(ONE_ATTEMPT, price_for(CONFIG_MODEL)))


def test_a_schema_violation_twice_fails_charged(codex: Path, fake: FakeOpenAI) -> None:
    wrong = {"summary": "no tasks field"}
    fake.enqueue(Reply(body=wrong), Reply(body=wrong))
    outcome = make().ask(Plan, "i", "p")
    assert not outcome.ok
    assert outcome.error is not None
    assert outcome.error.startswith("invalid answer after a corrective retry: the answer did")
    assert "tasks" in outcome.error
    assert len(fake.requests) == 2
    assert outcome.cost_usd == pytest.approx(2 * cost_usd(ONE_ATTEMPT, price_for(CONFIG_MODEL)))


def test_a_transient_failure_is_retried(codex: Path, fake: FakeOpenAI) -> None:
    fake.enqueue(Reply(status=500, text="boom"), Reply(body=plan_body()))
    outcome = make().ask(Plan, "i", "p")
    assert outcome.ok, outcome.error
    assert len(fake.requests) == 2


def test_a_refused_key_says_how_to_log_in(codex: Path, fake: FakeOpenAI) -> None:
    fake.enqueue(Reply(status=401, text="bad key"))
    outcome = make().ask(Plan, "i", "p")
    assert outcome.error is not None and outcome.error.startswith(NOT_LOGGED_IN)
    assert "401" in outcome.error
    assert len(fake.requests) == 1  # not worth a retry


def test_missing_codex_is_one_line_with_the_fix(
    codex_home: Path, fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert codex_backend.problem(Config()) == NOT_INSTALLED
    outcome = make().ask(Plan, "i", "p")
    assert outcome.error == NOT_INSTALLED
    assert outcome.cost_usd == 0.0 and not fake.requests


def test_not_logged_in_is_found_before_any_call(
    codex: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    (codex / "config.toml").write_text("[analytics]\nenabled = false\n")  # the OpenAI provider
    monkeypatch.delenv("OPENAI_API_KEY")
    assert codex_backend.problem(Config()) == NOT_LOGGED_IN
    execs: list[float] = []
    execute = codex_backend._Run.execute

    def recorded(run: codex_backend._Run, timeout: float) -> tuple[Usage, str]:
        execs.append(timeout)
        return execute(run, timeout)

    monkeypatch.setattr(codex_backend._Run, "execute", recorded)
    outcome = make().ask(Plan, "i", "p")
    assert outcome.error == NOT_LOGGED_IN
    assert execs == []  # found before any `codex exec`, and not retried
    subprocess.run(
        ["codex", "login", "--with-api-key"],
        input="sk-test-login-0123456789",
        text=True,
        capture_output=True,
        check=True,
    )
    assert codex_backend.problem(Config()) is None


def _fake_codex(bindir: Path, script: str) -> Path:
    """A stand-in `codex` for failures the real CLI cannot be made to show; logs each run."""
    bindir.mkdir()
    runs = bindir / "runs.log"
    path = bindir / "codex"
    path.write_text(
        f'#!/bin/sh\ncase "$1" in login) exit 0;; esac\necho run >> "{runs}"\n{script}\n'
    )
    path.chmod(0o755)
    return runs


def test_an_old_codex_says_to_upgrade_and_is_not_retried(
    codex_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _fake_codex(
        tmp_path / "old-bin", "echo 'Error: Unknown feature flag: hooks' >&2; exit 1"
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'old-bin'}{os.pathsep}{os.environ['PATH']}")
    outcome = make().ask(Plan, "i", "p")
    assert outcome.error == (
        "codex is too old for the manager (Error: Unknown feature flag: hooks): "
        "npm install -g @openai/codex@latest"
    )
    assert runs.read_text().count("run") == 1


def test_another_failure_names_the_exit_and_the_message(
    codex_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed = '{"type":"turn.failed","error":{"message":"quota exceeded"}}'
    runs = _fake_codex(tmp_path / "bad-bin", f"echo '{failed}'; exit 3")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bad-bin'}{os.pathsep}{os.environ['PATH']}")
    outcome = make().ask(Plan, "i", "p")
    assert outcome.error == "codex exec failed (exit 3): quota exceeded"
    assert runs.read_text().count("run") == 1


def _plant_trusted_stop_hook(codex_home: Path, marker: Path) -> None:
    """A user Stop hook that touches `marker`, with the trust entry Codex itself would write."""
    command = f"touch {marker}"
    (codex_home / "hooks.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}})
    )
    entry = {
        "event_name": "stop",
        "hooks": [{"type": "command", "command": command, "timeout": 600, "async": False}],
    }
    digest = hashlib.sha256(
        json.dumps(entry, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    with (codex_home / "config.toml").open("a") as fh:
        key = f"{codex_home / 'hooks.json'}:stop:0:0"
        fh.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "sha256:{digest}"\n')


def test_no_hook_fires_in_a_manager_run(codex: Path, fake: FakeOpenAI, tmp_path: Path) -> None:
    marker = tmp_path / "stop-hook-ran"
    _plant_trusted_stop_hook(codex, marker)
    # The hook is live: a plain `codex exec` with the same configuration runs it.
    fake.enqueue(Reply(text="hello"), plan_body())
    subprocess.run(
        ["codex", "exec", "--ephemeral", "--skip-git-repo-check", "hi"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
        check=True,
    )
    assert marker.exists()
    marker.unlink()
    outcome = make().ask(Plan, "i", "p")
    assert outcome.ok, outcome.error
    assert not marker.exists()


def _children_under(root: Path) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (
                    (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
            except OSError:
                continue
            if str(root) in cmdline:
                found.append(cmdline)
    return found


def test_a_hung_manager_is_killed_at_the_deadline(
    codex: Path, fake: FakeOpenAI, tmp_path: Path
) -> None:
    # The answer comes after 60 s, and it is a good one: a call that waited for it succeeds.
    fake.enqueue(Reply(body=plan_body(), delay=60))
    outcome = make(timeout=3).ask(Plan, "i", "p")
    assert outcome.error is not None
    waited = re.fullmatch(r"codex exec timed out after ([0-9.]+)s", outcome.error)
    assert waited is not None, outcome.error
    # It waited what was left of the call's 3 s, however slow the machine was.
    assert 0 < float(waited.group(1)) <= 3
    assert _children_under(tmp_path / "tmp") == []
    # The model may have answered, and been billed, unseen: the call is charged at its ceiling
    # (its prompt a token a byte, Codex's own text and its output cap), never at nothing.
    ceiling = Usage(estimate_tokens("i p") + codex_backend.OVERHEAD_CHARS, 0, 32_000)
    assert outcome.cost_usd >= cost_usd(ceiling, make(timeout=3).price) > 0


def test_auto_selection(codex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert select.backend_name(Config()) == "openai"  # an API key is set
    monkeypatch.delenv("OPENAI_API_KEY")
    assert select.backend_name(Config()) == "codex"
    assert select.backend_name(Config(manager="openai")) == "openai"
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert select.backend_name(Config()) == "openai"
    problem = select.configured_problem(Config())
    assert problem is not None and "OPENAI_API_KEY is not set" in problem
    assert select.configured_problem(Config(manager="codex")) == NOT_INSTALLED
