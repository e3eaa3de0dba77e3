"""The openai backend against the fake server: every failure class of the SDK, and the cost."""

from __future__ import annotations

import socket
from typing import Any, cast

import pytest
from pydantic import BaseModel

from autopilot_codex.config import Config
from autopilot_codex.manager import attempts
from autopilot_codex.manager.openai_backend import OpenAIManager
from autopilot_codex.manager.pricing import Price, Usage
from autopilot_codex.manager.probe import probe
from autopilot_codex.manager.prompts import Prompt, framed
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
    manager: FakeOpenAI, api: str, schema: type[BaseModel], body: dict[str, Any]
) -> None:
    manager.enqueue(body)
    outcome = make(api).ask(schema, "instructions", "prompt")
    assert outcome.ok, outcome.error
    assert outcome.value == schema.model_validate(body)
    assert outcome.cost_usd == pytest.approx(ATTEMPT)
    request = manager.requests[0]
    sent = cast("dict[str, Any]", request.body)
    assert request.schema_name == schema.__name__
    assert request.api == api
    # Strict structured output, as the SDK sends it.
    fmt = sent["text"]["format"] if api == "responses" else sent["response_format"]["json_schema"]
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
    manager: FakeOpenAI, replies: list[Any], ok: bool, attempts: int
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


def test_a_hanging_server_cannot_outlive_the_deadline(
    manager: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server answers only after 30 s, and well: a call that waited for it would succeed.
    manager.enqueue(*[Reply(body=review_body(), delay=30)] * 5)
    backend = make(timeout=1.5)
    given: list[float] = []
    attempt = backend.attempt

    def recorded(schema: type[Review], request: Prompt, timeout: float) -> tuple[Review, Usage]:
        given.append(timeout)
        return attempt(schema, request, timeout)

    monkeypatch.setattr(backend, "attempt", recorded)
    outcome = backend.ask(Review, "i", "p")
    assert not outcome.ok
    assert "timed out" in (outcome.error or "") or "within" in (outcome.error or "")
    # Every request was sent with what was left of the call's 1.5 s, however slow the machine.
    assert given and given[0] <= 1.5 and all(later < given[0] for later in given[1:])


def test_connection_refused_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    waits: list[float] = []
    monkeypatch.setattr(attempts, "sleep", waits.append)
    outcome = make(timeout=3).ask(Review, "i", "p")
    assert not outcome.ok and "connect" in (outcome.error or "")
    assert outcome.cost_usd == 0
    # Refused is retried like any dropped connection, but the waits fit the call's deadline.
    assert len(waits) < attempts.TRANSIENT_ATTEMPTS and sum(waits) < 3


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


# -- answers that fit the schema but say nothing ------------------------------------------------


def _plan_with(**fields: object) -> dict[str, Any]:
    body = plan_body(2)
    body["tasks"][1].update(fields)
    return body


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize(
    ("schema", "empty", "named"),
    [
        (Review, review_body("fix", summary="", findings=[]), "empty summary"),
        (Review, review_body("reject", summary=" ", findings=[]), "empty summary"),
        (Plan, {"summary": "s", "tasks": []}, "no tasks"),
        (Plan, _plan_with(title="..."), "task 2 ('T2') has an empty title"),
        (Plan, _plan_with(id="T1"), "repeats the id 'T1'"),
        (Plan, _plan_with(acceptance=[]), "has no acceptance criterion"),
        (Verdict, verdict_body("continue", reason=""), "reason was empty"),
    ],
    ids=["fix", "reject", "no-tasks", "title", "ids", "acceptance", "reason"],
)
def test_an_empty_answer_gets_a_corrective_retry_naming_what_was_empty(
    manager: FakeOpenAI, api: str, schema: type[BaseModel], empty: dict[str, Any], named: str
) -> None:
    manager.enqueue(empty, empty)
    outcome = make(api).ask(schema, "instructions", "prompt")
    assert not outcome.ok
    assert outcome.error and outcome.error.startswith("invalid answer") and named in outcome.error
    assert len(manager.requests) == 2
    assert named in manager.requests[1].prompt_text
    assert named not in manager.requests[0].prompt_text
    assert outcome.cost_usd == pytest.approx(2 * ATTEMPT)
    assert outcome.corrections == 1


def test_an_empty_answer_then_a_real_one_is_used_and_both_are_charged(manager: FakeOpenAI) -> None:
    manager.enqueue(review_body("fix", summary="", findings=[]), review_body("fix"))
    outcome = make().ask(Review, "i", "p")
    assert outcome.ok and outcome.attempts == 2
    assert outcome.value is not None and outcome.value.summary == "review says fix"
    assert outcome.cost_usd == pytest.approx(2 * ATTEMPT)


# -- errors that show the fix ---------------------------------------------------------------------


def test_the_servers_error_text_is_kept_and_an_unsupported_request_is_not_retried(
    manager: FakeOpenAI,
) -> None:
    manager.enqueue(*[Reply(status=500, text="response_format json_schema not supported")] * 3)
    outcome = make("chat").ask(Review, "i", "p")
    assert outcome.error == "HTTP 500: response_format json_schema not supported"
    assert len(manager.requests) == 1


@pytest.mark.parametrize("status", [400, 404, 422])
def test_validation_errors_are_never_retried_and_say_why(manager: FakeOpenAI, status: int) -> None:
    manager.enqueue(*[Reply(status=status, text=f"'strict' is not allowed ({PLANTED_KEY})")] * 3)
    outcome = make("chat").ask(Review, "i", "p")
    assert len(manager.requests) == 1
    assert outcome.error and outcome.error.startswith(f"HTTP {status}: 'strict' is not allowed")
    assert PLANTED_KEY not in outcome.error


def test_a_404_on_responses_hints_at_the_chat_api(manager: FakeOpenAI) -> None:
    manager.enqueue(Reply(status=404, raw="404 page not found", content_type="text/plain"))
    outcome = make("responses").ask(Review, "i", "p")
    assert len(manager.requests) == 1
    assert outcome.error and "404 page not found" in outcome.error
    assert "AUTOPILOT_CODEX_API=chat" in outcome.error
    assert manager.base_url in outcome.error


def test_an_unreachable_manager_names_the_url_not_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:secret@127.0.0.1:{port}/v1?k=x")
    outcome = make(timeout=2).ask(Review, "i", "p")
    assert outcome.error == f"cannot connect to the API at http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_length_cut_asks_for_a_shorter_answer(manager: FakeOpenAI, api: str) -> None:
    cut = Reply(text='{"decision": "approve", "summ', incomplete=True)
    manager.enqueue(cut, cut)
    manager_ = OpenAIManager(
        model="gpt-6.2-sol", api=api, timeout_s=10, price=PRICE, max_output_tokens=321
    )
    outcome = manager_.ask(Review, "i", "p")
    note = "your answer was cut off at 321 tokens; answer shorter"
    assert note in manager.requests[1].prompt_text
    assert "LengthFinishReasonError" not in manager.requests[1].prompt_text
    assert outcome.error == f"invalid answer after a corrective retry: {note}"


# -- usage and cost -------------------------------------------------------------------------------


def test_chat_usage_reads_cached_prompt_tokens(manager: FakeOpenAI) -> None:
    manager.enqueue(
        Reply(body=review_body(), input_tokens=1000, cached_tokens=800, output_tokens=0)
    )
    outcome = make("chat").ask(Review, "i", "p")
    assert outcome.usage.cached_tokens == 800
    assert outcome.cost_usd == pytest.approx(0.00028)  # 200 * $1 + 800 * $0.1 per 1M


def test_the_long_context_rate_is_judged_per_request_not_per_call(manager: FakeOpenAI) -> None:
    # Two requests of 150K input each: neither is above 272K, so no surcharge, $0.15 apiece.
    manager.enqueue(
        Reply(text="prose", input_tokens=150_000, output_tokens=0),
        Reply(body=review_body(), input_tokens=150_000, output_tokens=0),
    )
    outcome = make().ask(Review, "i", "p")
    assert outcome.ok
    assert outcome.cost_usd == pytest.approx(0.30)


def test_the_retry_note_lands_after_the_data_and_the_prompt_keeps_its_cap(
    manager: FakeOpenAI,
) -> None:
    prompt = "Diff:\n" + framed("DIFF", "+x\n" * 3_000)
    cap = len("i") + len(prompt) + 100
    manager.enqueue(Reply(text="prose"), review_body())
    manager_ = OpenAIManager(model="gpt-6.2-sol", timeout_s=10, price=PRICE, prompt_chars=cap)
    assert manager_.ask(Review, "i", prompt).ok
    retried = manager.requests[1].prompt_text
    closing = prompt[prompt.rindex("\nDATA DIFF") :]
    assert closing in retried
    assert retried.index("could not be used") > retried.index(closing)
    assert len(retried) <= cap + 1  # +1: the fake joins instructions and input with a newline


# -- the probe ------------------------------------------------------------------------------------


def test_the_probe_sees_a_server_that_honours_the_schema(manager: FakeOpenAI) -> None:
    manager.enqueue({"greeting": "hello", "word_count": 1})
    result = probe(Config(api="chat"))
    assert result.honoured and result.answered, result.detail
    assert len(manager.requests) == 1
    request = manager.requests[0]
    sent = cast("dict[str, Any]", request.body)
    assert request.schema_name == "Probe"
    assert sent["response_format"]["json_schema"]["strict"] is True
    assert sent["max_completion_tokens"] == 200
    assert "honoured" in result.line


def test_the_probe_sees_a_server_that_ignores_the_schema(manager: FakeOpenAI) -> None:
    manager.enqueue(Reply(text="Hello there, friend!"), Reply(text="Hi!"))
    result = probe(Config(api="responses"))
    assert not result.honoured and result.answered
    assert "ignored the schema" in result.detail
    assert "AUTOPILOT_CODEX_API=chat" in result.detail
    assert len(manager.requests) == 2


def test_the_probe_sees_a_schema_obeyed_only_after_the_retry(manager: FakeOpenAI) -> None:
    manager.enqueue(Reply(text="Hello!"), {"greeting": "hello", "word_count": 1})
    result = probe(Config(api="chat"))
    assert not result.honoured and result.answered
    assert "does not enforce" in result.detail


def test_the_probe_reports_a_server_that_refuses_the_request(manager: FakeOpenAI) -> None:
    manager.enqueue(Reply(status=500, text="response_format json_schema not supported"))
    result = probe(Config(api="chat"))
    assert not result.honoured and not result.answered
    assert "json_schema not supported" in result.detail


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_lone_surrogate_in_an_answer_is_an_invalid_answer_never_a_crash(
    manager: FakeOpenAI, api: str
) -> None:
    # Half a pair would fail the first UTF-8 write of the verdict (state, ledger, prompt). The
    # SDK's strict JSON reader refuses it: one corrective retry, as for any invalid answer.
    manager.enqueue(verdict_body("done", reason="ok \ud800"))
    manager.enqueue(verdict_body("done"))
    outcome = make(api).ask(Verdict, "instructions", "prompt")
    assert outcome.ok, outcome.error
    assert outcome.corrections == 1
    assert outcome.value == Verdict.model_validate(verdict_body("done"))
