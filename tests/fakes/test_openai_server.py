"""Tests for the fake OpenAI server, driven by the real ``openai`` client."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import openai
import pydantic
import pytest
from pydantic import BaseModel

from tests.fakes.openai_server import FakeOpenAI, LoggedRequest, Reply, reply_from_json

REPO_ROOT = Path(__file__).resolve().parents[2]


class Task(BaseModel):
    id: str
    title: str
    files: list[str]
    steps: list[str]
    acceptance: list[str]
    tests: list[str]


class Plan(BaseModel):
    tasks: list[Task]


class Issue(BaseModel):
    severity: Literal["low", "medium", "high"]
    file: str | None
    line: int | None
    message: str


class Review(BaseModel):
    decision: Literal["approve", "fix", "reject"]
    issues: list[Issue]
    summary: str


class Verdict(BaseModel):
    decision: Literal["continue", "done", "abort"]
    next_task: Task | None
    reason: str


TASK = {
    "id": "T1",
    "title": "Add parser",
    "files": ["a.py"],
    "steps": ["write it"],
    "acceptance": ["works"],
    "tests": ["test_a.py"],
}
PLAN = {"tasks": [TASK]}
REVIEW = {"decision": "fix", "issues": [], "summary": "needs work"}
VERDICT = {"decision": "done", "next_task": None, "reason": "all good"}


@pytest.fixture
def srv() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


# Every client a test makes, closed when it ends: a socket left for the garbage collector
# warns in whichever later test the collector happens to run (a warning fails its test).
_CLIENTS: list[openai.OpenAI] = []


@pytest.fixture(autouse=True)
def _closed_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def make_client(srv: FakeOpenAI, *, max_retries: int = 0, timeout: float = 5.0) -> openai.OpenAI:
    client = openai.OpenAI(
        base_url=srv.base_url, api_key="sk-test", max_retries=max_retries, timeout=timeout
    )
    _CLIENTS.append(client)
    return client


def ask_plan(client: openai.OpenAI) -> Plan | None:
    resp = client.responses.parse(
        model="gpt-test",
        instructions="You are the manager.",
        input="Plan the work for issue 42.",
        text_format=Plan,
    )
    return resp.output_parsed


# -- valid answers ------------------------------------------------------------------


def test_responses_parse_valid(srv: FakeOpenAI) -> None:
    srv.enqueue(PLAN)
    client = make_client(srv)
    raw = client.responses.with_raw_response.parse(
        model="gpt-test",
        instructions="You are the manager.",
        input=[{"role": "user", "content": [{"type": "input_text", "text": "Plan issue 42."}]}],
        text_format=Plan,
    )
    resp = raw.parse()
    assert resp.output_parsed == Plan.model_validate(PLAN)
    assert resp.status == "completed"
    assert json.loads(resp.output_text) == PLAN
    (req,) = srv.requests
    assert (req.method, req.path, req.api) == ("POST", "/v1/responses", "responses")
    assert req.schema_name == "Plan"
    assert req.retry_count == 0
    assert req.headers["authorization"] == "Bearer sk-test"
    assert "You are the manager." in req.prompt_text
    assert "Plan issue 42." in req.prompt_text
    assert req.body is not None and req.body["model"] == "gpt-test"


def test_chat_parse_valid(srv: FakeOpenAI) -> None:
    srv.enqueue(Review.model_validate(REVIEW))  # pydantic models are accepted as bodies
    client = make_client(srv)
    cc = client.chat.completions.parse(
        model="gpt-test",
        messages=[
            {"role": "system", "content": "Review strictly."},
            {"role": "user", "content": "diff --git a/x b/x"},
        ],
        response_format=Review,
    )
    msg = cc.choices[0].message
    assert msg.parsed == Review.model_validate(REVIEW)
    assert msg.refusal is None
    assert cc.choices[0].finish_reason == "stop"
    (req,) = srv.requests
    assert (req.path, req.api, req.schema_name) == ("/v1/chat/completions", "chat", "Review")
    assert req.headers["x-stainless-helper-method"] == "chat.completions.parse"
    assert "Review strictly." in req.prompt_text and "diff --git" in req.prompt_text


def test_per_schema_queues_take_precedence(srv: FakeOpenAI) -> None:
    srv.enqueue(VERDICT, schema="Verdict")
    srv.enqueue(REVIEW, schema="Review")
    srv.enqueue(PLAN)  # general queue
    client = make_client(srv)
    review = client.responses.parse(model="m", input="r", text_format=Review).output_parsed
    plan = client.responses.parse(model="m", input="p", text_format=Plan).output_parsed
    cc = client.chat.completions.parse(
        model="m", messages=[{"role": "user", "content": "v"}], response_format=Verdict
    )
    assert review == Review.model_validate(REVIEW)
    assert plan == Plan.model_validate(PLAN)
    assert cc.choices[0].message.parsed == Verdict.model_validate(VERDICT)
    assert [r.schema_name for r in srv.requests] == ["Review", "Plan", "Verdict"]
    assert srv.pending() == 0 and srv.pending("Review") == 0


def test_responder_and_default(srv: FakeOpenAI) -> None:
    def responder(req: LoggedRequest) -> Reply | None:
        return Reply(body=VERDICT) if req.schema_name == "Verdict" else None

    srv.responder = responder
    srv.default = Reply(body=PLAN)
    client = make_client(srv)
    verdict = client.responses.parse(model="m", input="v", text_format=Verdict).output_parsed
    assert verdict == Verdict.model_validate(VERDICT)
    assert ask_plan(client) == Plan.model_validate(PLAN)
    assert ask_plan(client) == Plan.model_validate(PLAN)  # default is reused


def test_empty_queue_gives_503_without_retry(srv: FakeOpenAI) -> None:
    client = make_client(srv, max_retries=2)
    with pytest.raises(openai.InternalServerError) as info:
        ask_plan(client)
    assert info.value.status_code == 503
    assert len(srv.requests) == 1


def test_models_and_unknown_endpoint(srv: FakeOpenAI) -> None:
    client = make_client(srv)
    assert [m.id for m in client.models.list()] == ["fake-model", "gpt-6.2-sol"]
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="m", input="x")
    assert [(r.method, r.path, r.api) for r in srv.requests] == [
        ("GET", "/v1/models", "other"),
        ("POST", "/v1/embeddings", "other"),
    ]


# -- errors and retries -----------------------------------------------------------


def test_429_without_retry_after_is_retried_with_backoff(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(status=429), Reply(status=429))
    client = make_client(srv, max_retries=1)
    with pytest.raises(openai.RateLimitError) as info:
        ask_plan(client)
    assert info.value.status_code == 429
    assert [r.retry_count for r in srv.requests] == [0, 1]


def test_429_with_retry_after_is_honoured(srv: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    srv.enqueue(Reply(status=429, headers={"retry-after": "0.05"}), PLAN)
    # The client's own wait, read where it sleeps (this thread only: other tests' threads may
    # sleep too), not guessed from the wall clock.
    slept: list[float] = []
    sleep, caller = time.sleep, threading.get_ident()

    def recorded(seconds: float) -> None:
        if threading.get_ident() == caller:
            slept.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(time, "sleep", recorded)
    with make_client(srv, max_retries=2) as client:
        assert ask_plan(client) == Plan.model_validate(PLAN)
    assert slept == [0.05]  # the default backoff is >= 0.375 s
    assert [r.retry_count for r in srv.requests] == [0, 1]


def test_429_with_long_retry_after_is_not_retried(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(status=429, headers={"retry-after": "300"}), PLAN)
    client = make_client(srv, max_retries=2)
    with pytest.raises(openai.RateLimitError):
        ask_plan(client)
    assert len(srv.requests) == 1


def test_insufficient_quota_code(srv: FakeOpenAI) -> None:
    srv.enqueue(
        Reply(
            status=429,
            error_code="insufficient_quota",
            text="You exceeded your current quota.",
            headers={"x-should-retry": "false"},
        )
    )
    client = make_client(srv, max_retries=2)
    with pytest.raises(openai.RateLimitError) as info:
        ask_plan(client)
    assert info.value.code == "insufficient_quota"
    assert info.value.type == "insufficient_quota"
    assert "You exceeded your current quota." in str(info.value)
    assert len(srv.requests) == 1


def test_500_then_success(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(status=500, headers={"retry-after-ms": "10"}), PLAN)
    client = make_client(srv, max_retries=2)
    assert ask_plan(client) == Plan.model_validate(PLAN)
    assert [r.retry_count for r in srv.requests] == [0, 1]


# -- broken bodies ----------------------------------------------------------------


def test_malformed_json_raises_json_decode_error(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(raw='{"output": ['), Reply(raw=b'{"id": '))
    client = make_client(srv, max_retries=2)
    with pytest.raises(json.JSONDecodeError):
        ask_plan(client)
    raw = client.responses.with_raw_response.parse(model="m", input="x", text_format=Plan)
    with pytest.raises(json.JSONDecodeError):
        raw.http_response.json()
    assert len(srv.requests) == 2


def test_empty_envelope_gives_output_parsed_none(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(raw="{}"))
    client = make_client(srv)
    resp = client.responses.parse(model="m", input="x", text_format=Plan)
    assert resp.output_parsed is None


def test_invalid_answer_text_raises_validation_error(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(text="```json\n" + json.dumps(PLAN) + "\n```"), {"tasks": "nope"})
    client = make_client(srv)
    with pytest.raises(pydantic.ValidationError, match="json_invalid|Invalid JSON"):
        ask_plan(client)
    with pytest.raises(pydantic.ValidationError):
        ask_plan(client)


def test_non_final_phase_is_not_parsed(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(body=PLAN, phase="commentary"), Reply(body=PLAN, phase=None))
    client = make_client(srv)
    assert ask_plan(client) is None
    assert ask_plan(client) == Plan.model_validate(PLAN)  # no phase: legacy parse


def test_refusal_both_apis(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(refusal="I can't help with that."), Reply(refusal="No."))
    client = make_client(srv)
    resp = client.responses.parse(model="m", input="x", text_format=Plan)
    assert resp.output_parsed is None
    message = resp.output[0]
    assert message.type == "message"
    assert message.content[0].type == "refusal"
    assert message.content[0].refusal == "I can't help with that."
    cc = client.chat.completions.parse(
        model="m", messages=[{"role": "user", "content": "x"}], response_format=Plan
    )
    assert cc.choices[0].message.parsed is None
    assert cc.choices[0].message.refusal == "No."


def test_incomplete_and_length(srv: FakeOpenAI) -> None:
    truncated = json.dumps(PLAN)[:20]
    srv.enqueue(Reply(text=truncated, incomplete=True), Reply(text=truncated, incomplete=True))
    client = make_client(srv)
    raw = client.responses.with_raw_response.parse(model="m", input="x", text_format=Plan)
    data = raw.http_response.json()
    assert data["status"] == "incomplete"
    assert data["incomplete_details"] == {"reason": "max_output_tokens"}
    with pytest.raises(pydantic.ValidationError, match="EOF"):
        raw.parse()
    with pytest.raises(openai.LengthFinishReasonError) as info:
        client.chat.completions.parse(
            model="m", messages=[{"role": "user", "content": "x"}], response_format=Plan
        )
    usage = info.value.completion.usage
    assert usage is not None and usage.completion_tokens == 200


def test_chat_content_filter(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(body=PLAN, finish_reason="content_filter"))
    client = make_client(srv)
    with pytest.raises(openai.ContentFilterFinishReasonError):
        client.chat.completions.parse(
            model="m", messages=[{"role": "user", "content": "x"}], response_format=Plan
        )


# -- network failures ---------------------------------------------------------------


def test_delay_times_out_and_close_is_fast() -> None:
    srv = FakeOpenAI()
    try:
        srv.enqueue(Reply(body=PLAN, delay=30.0))
        client = make_client(srv, timeout=0.3)
        with pytest.raises(openai.APITimeoutError):
            ask_plan(client)
    finally:
        start = time.monotonic()
        srv.close()
        assert time.monotonic() - start < 15.0  # the held reply would take 30 s
    assert len(srv.requests) == 1


def test_close_with_request_in_flight() -> None:
    srv = FakeOpenAI()
    srv.enqueue(Reply(body=PLAN, delay=30.0))
    client = make_client(srv, timeout=30.0)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            ask_plan(client)
        except BaseException as exc:  # recorded for the assertion below
            errors.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    deadline = time.monotonic() + 5.0
    while not srv.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.requests
    start = time.monotonic()
    srv.close()
    worker.join(timeout=20.0)
    assert time.monotonic() - start < 15.0  # the held reply would take 30 s
    assert not worker.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], openai.APIConnectionError)


def test_drop_gives_connection_error(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(drop=True), Reply(drop=True))
    client = make_client(srv)
    with pytest.raises(openai.APIConnectionError):
        ask_plan(client)
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.parse(
            model="m", messages=[{"role": "user", "content": "x"}], response_format=Plan
        )
    assert len(srv.requests) == 2


# -- usage --------------------------------------------------------------------------


def test_usage_numbers(srv: FakeOpenAI) -> None:
    reply = Reply(
        body=PLAN, input_tokens=1234, cached_tokens=1000, output_tokens=56, reasoning_tokens=7
    )
    srv.enqueue(reply, reply)
    client = make_client(srv)
    raw = client.responses.with_raw_response.parse(model="m", input="x", text_format=Plan)
    assert raw.http_response.json()["usage"] == {
        "input_tokens": 1234,
        "input_tokens_details": {"cached_tokens": 1000},
        "output_tokens": 56,
        "output_tokens_details": {"reasoning_tokens": 7},
        "total_tokens": 1290,
    }
    usage = raw.parse().usage
    assert usage is not None and usage.input_tokens_details.cached_tokens == 1000

    raw_cc = client.chat.completions.with_raw_response.parse(
        model="m", messages=[{"role": "user", "content": "x"}], response_format=Plan
    )
    cc_usage = raw_cc.http_response.json()["usage"]
    assert cc_usage["prompt_tokens"] == 1234
    assert cc_usage["completion_tokens"] == 56
    assert cc_usage["total_tokens"] == 1290
    assert cc_usage["prompt_tokens_details"]["cached_tokens"] == 1000
    assert raw_cc.parse().choices[0].message.parsed == Plan.model_validate(PLAN)


# -- script elements and the command line -----------------------------------------


def test_reply_from_json() -> None:
    assert reply_from_json(PLAN) == Reply(body=PLAN)
    reply = reply_from_json({"__reply__": {"status": 429, "headers": {"retry-after": "1"}}})
    assert reply.status == 429 and reply.headers == {"retry-after": "1"}
    with pytest.raises(ValueError, match="unknown Reply fields"):
        reply_from_json({"__reply__": {"stauts": 429}})


def test_cli_mode(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    log_file = tmp_path / "requests.jsonl"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "Review": [REVIEW, {"__reply__": {"status": 500, "headers": {"retry-after": "0"}}}],
                "*": [],
            }
        ),
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.openai_server",
            "--port-file",
            str(port_file),
            "--default-json",
            json.dumps(PLAN),
            "--script",
            str(script),
            "--log",
            str(log_file),
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        while not port_file.exists():  # however long a loaded machine takes to start it
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        port = int(port_file.read_text(encoding="utf-8"))
        with openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", max_retries=0, timeout=60
        ) as client:
            assert ask_plan(client) == Plan.model_validate(PLAN)  # default reply
            parsed = client.responses.parse(model="m", input="r", text_format=Review)
            assert parsed.output_parsed == Review.model_validate(REVIEW)  # scripted reply
            with pytest.raises(openai.InternalServerError):  # second scripted reply
                client.responses.parse(model="m", input="r", text_format=Review)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert proc.returncode == 0, err
    lines = [json.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
    assert [entry["schema_name"] for entry in lines] == ["Plan", "Review", "Review"]
    assert lines[0]["api"] == "responses"
    assert "Plan the work for issue 42." in lines[0]["prompt_text"]
    assert lines[0]["body"]["text"]["format"]["name"] == "Plan"
