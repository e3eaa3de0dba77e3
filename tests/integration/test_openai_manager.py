"""The openai backend against the fake server: every failure class of the SDK, and the cost."""

from __future__ import annotations

import socket
import time

import pytest

from autopilot_codex.manager.openai_backend import OpenAIManager
from autopilot_codex.manager.pricing import Price
from autopilot_codex.manager.schemas import Plan, Review, Verdict
from tests.conftest import PLANTED_KEY, plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply

# $1 per 1M input tokens and $10 per 1M output: 1000 in + 200 out = $0.003 an attempt.
PRICE = Price(1.0, 0.1, 10.0)
ATTEMPT = 0.003


def make(api: str = "responses", timeout: float = 10.0) -> OpenAIManager:
    return OpenAIManager(model="gpt-6.2-sol", api=api, timeout_s=timeout, price=PRICE)


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize(
    ("schema", "body"),
    [
        (Plan, plan_body(3)),
        (Review, review_body("approve")),
        (Review, review_body("fix")),
        (Review, review_body("reject")),
        (Verdict, verdict_body("continue", done=True)),
        (Verdict, verdict_body("done")),
        (Verdict, verdict_body("abort")),
    ],
)
def test_valid_answers_parse_and_cost(
    manager: FakeOpenAI, api: str, schema: type, body: dict
) -> None:
    manager.enqueue(body)
    outcome = make(api).ask(schema, "instructions", "prompt")
    assert outcome.ok, outcome.error
    assert outcome.value == schema.model_validate(body)
    assert outcome.cost_usd == pytest.approx(ATTEMPT)
    request = manager.requests[0]
    assert request.schema_name == schema.__name__
    assert request.api == api
    # Strict structured output, as the SDK sends it.
    fmt = (
        request.body["text"]["format"]
        if api == "responses"
        else request.body["response_format"]["json_schema"]
    )
    assert fmt["strict"] is True


def test_the_api_key_goes_in_the_header_never_in_the_prompt(manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body())
    make().ask(Plan, "instructions", f"prompt mentioning {PLANTED_KEY}")
    request = manager.requests[0]
    assert PLANTED_KEY not in request.raw_body
    assert "[REDACTED]" in request.prompt_text
    assert request.headers["authorization"] == f"Bearer {PLANTED_KEY}"


@pytest.mark.parametrize(
    "bad",
    [
        Reply(raw=b"{not json"),
        Reply(raw=b"{}"),
        Reply(text="Sure! Here is my review: looks fine."),
        Reply(text='```json\n{"decision": "approve"}\n```'),
        Reply(body={"decision": "maybe", "summary": "", "findings": [], "revert_files": []}),
        Reply(refusal="I can't help with that."),
        Reply(text='{"decision": "appr', incomplete=True),
        Reply(body=review_body(), phase="commentary"),
    ],
    ids=[
        "malformed",
        "empty-envelope",
        "prose",
        "fenced",
        "schema-mismatch",
        "refusal",
        "truncated",
        "commentary",
    ],
)
def test_invalid_answers_get_one_corrective_retry_then_fail_and_are_charged(
    manager: FakeOpenAI, bad: Reply
) -> None:
    manager.enqueue(bad, bad)
    outcome = make().ask(Review, "instructions", "prompt")
    assert not outcome.ok
    assert outcome.error and "invalid answer" in outcome.error
    assert len(manager.requests) == 2
    assert "could not be used" in manager.requests[1].prompt_text
    # Both attempts are billed when the server reported usage (a malformed body reports none).
    unbilled = bad.raw is not None  # a raw body carries no usage to bill
    assert outcome.cost_usd == pytest.approx(0 if unbilled else 2 * ATTEMPT)


def test_corrective_retry_can_succeed(manager: FakeOpenAI) -> None:
    manager.enqueue(Reply(text="prose"), review_body("approve"))
    outcome = make().ask(Review, "i", "p")
    assert outcome.ok and outcome.attempts == 2
    assert outcome.cost_usd == pytest.approx(2 * ATTEMPT)


@pytest.mark.parametrize(
    ("replies", "ok", "attempts"),
    [
        ([Reply(status=429), review_body()], True, 2),
        ([Reply(status=429, headers={"retry-after": "0.01"})] * 3, False, 3),
        ([Reply(status=429, error_code="insufficient_quota")], False, 1),
        ([Reply(status=500), Reply(status=500), review_body()], True, 3),
        ([Reply(status=500)] * 3, False, 3),
        ([Reply(status=401)], False, 1),
        ([Reply(status=400)], False, 1),
        ([Reply(drop=True), review_body()], True, 2),
    ],
    ids=[
        "429-then-ok",
        "429-retry-after",
        "quota",
        "500-500-ok",
        "500x3",
        "401",
        "400",
        "dropped-then-ok",
    ],
)
def test_transient_failures_retry_within_the_deadline(
    manager: FakeOpenAI, replies: list, ok: bool, attempts: int
) -> None:
    manager.enqueue(*replies)
    outcome = make().ask(Review, "i", "p")
    assert outcome.ok is ok, outcome.error
    assert len(manager.requests) == attempts


def test_quota_and_auth_errors_name_the_cause(manager: FakeOpenAI) -> None:
    manager.enqueue(Reply(status=429, error_code="insufficient_quota"))
    assert "quota" in (make().ask(Review, "i", "p").error or "")
    manager.enqueue(Reply(status=401))
    assert "OPENAI_API_KEY" in (make().ask(Review, "i", "p").error or "")


def test_a_hanging_server_cannot_outlive_the_deadline(manager: FakeOpenAI) -> None:
    manager.enqueue(*[Reply(body=review_body(), delay=30)] * 5)
    started = time.monotonic()
    outcome = make(timeout=1.5).ask(Review, "i", "p")
    elapsed = time.monotonic() - started
    assert not outcome.ok
    # The fault tests' slack for a loaded machine; the server would hang for 30 s.
    assert elapsed < 1.5 + 3.0, elapsed
    assert "timed out" in (outcome.error or "") or "within" in (outcome.error or "")


def test_connection_refused_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    started = time.monotonic()
    outcome = make(timeout=3).ask(Review, "i", "p")
    assert not outcome.ok and "connect" in (outcome.error or "")
    assert outcome.cost_usd == 0
    assert time.monotonic() - started < 4


def test_chat_length_and_content_filter_are_invalid_but_charged(manager: FakeOpenAI) -> None:
    manager.enqueue(
        Reply(body=review_body(), incomplete=True),
        Reply(body=review_body(), finish_reason="content_filter"),
    )
    outcome = make("chat").ask(Review, "i", "p")
    assert not outcome.ok
    assert outcome.cost_usd == pytest.approx(2 * ATTEMPT)


def test_usage_with_cached_tokens_is_priced_at_the_cached_rate(manager: FakeOpenAI) -> None:
    manager.enqueue(
        Reply(body=review_body(), input_tokens=1000, cached_tokens=800, output_tokens=0)
    )
    outcome = make().ask(Review, "i", "p")
    assert outcome.cost_usd == pytest.approx((200 * 1.0 + 800 * 0.1) / 1e6)


def test_the_suite_cannot_reach_beyond_loopback() -> None:
    # The audit hook in tests/conftest.py refuses any connection that is not to loopback, so a
    # test that forgot to point a client at a fake fails instead of calling out.
    with pytest.raises(ConnectionRefusedError, match="beyond loopback"):
        socket.create_connection(("192.0.2.1", 9), timeout=1)
