"""The fake's streamed Responses answers (``"stream": true``), as Codex and the SDK read them."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import openai
import pytest
from pydantic import BaseModel

from tests.fakes import sse
from tests.fakes.openai_server import FakeOpenAI, Reply


class Plan(BaseModel):
    summary: str
    steps: list[str]


PLAN = {"summary": "s" * 150, "steps": ["one", "two"]}


@pytest.fixture
def srv() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def post_stream(srv: FakeOpenAI, body: dict[str, object]) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    try:
        conn.request(
            "POST",
            "/v1/responses",
            body=json.dumps(body),
            headers={"content-type": "application/json", "accept": "text/event-stream"},
        )
        resp = conn.getresponse()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        return resp.status, headers, resp.read().decode()
    finally:
        conn.close()


def parse_frames(text: str) -> list[tuple[str, dict[str, object]]]:
    frames = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        frames.append((lines["event"], json.loads(lines["data"])))
    return frames


def test_stream_carries_the_events_codex_reads(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(body=PLAN, input_tokens=321, cached_tokens=21, output_tokens=45))
    status, headers, text = post_stream(srv, {"model": "gpt-5.5", "stream": True, "input": "x"})
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    frames = parse_frames(text)
    types = [name for name, _ in frames]
    assert all(data["type"] == name for name, data in frames)
    assert [data["sequence_number"] for _, data in frames] == list(range(len(frames)))
    assert types[0] == "response.created" and types[-1] == "response.completed"
    order = [
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.output_item.done",
    ]
    assert [t for t in types if t in order and t != "response.output_text.delta"] == [
        o for o in order if o != "response.output_text.delta"
    ]
    assert types.index("response.output_item.added") < types.index("response.output_text.delta")
    created = frames[0][1]["response"]
    assert isinstance(created, dict)
    assert created["status"] == "in_progress" and created["output"] == []
    added = frames[types.index("response.output_item.added")][1]["item"]
    assert isinstance(added, dict) and added["content"] == [] and added["status"] == "in_progress"
    deltas = [str(d["delta"]) for n, d in frames if n == "response.output_text.delta"]
    assert len(deltas) > 1 and json.loads("".join(deltas)) == PLAN
    done_item = frames[types.index("response.output_item.done")][1]["item"]
    assert isinstance(done_item, dict) and done_item["status"] == "completed"
    assert json.loads(done_item["content"][0]["text"]) == PLAN
    completed = frames[-1][1]["response"]
    assert isinstance(completed, dict) and completed["status"] == "completed"
    assert completed["usage"] == {
        "input_tokens": 321,
        "input_tokens_details": {"cached_tokens": 21},
        "output_tokens": 45,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 366,
    }
    (req,) = srv.requests
    assert req.body is not None and req.body["stream"] is True


def test_openai_client_reads_the_stream(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(body=PLAN, output_tokens=9))
    client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0, timeout=5)
    with client, client.responses.stream(model="m", input="plan", text_format=Plan) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert final.output_parsed == Plan.model_validate(PLAN)
    assert final.usage is not None and final.usage.output_tokens == 9
    assert "response.output_text.delta" in kinds


def test_incomplete_stream_ends_with_response_incomplete(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(text='{"summary": "cut', incomplete=True))
    _, _, text = post_stream(srv, {"stream": True, "input": "x"})
    name, data = parse_frames(text)[-1]
    response = data["response"]
    assert name == "response.incomplete"
    assert isinstance(response, dict) and response["status"] == "incomplete"


def test_errors_and_plain_requests_are_not_streamed(srv: FakeOpenAI) -> None:
    srv.enqueue(Reply(status=500, text="boom"), Reply(body=PLAN))
    status, headers, text = post_stream(srv, {"stream": True, "input": "x"})
    assert status == 500 and headers["content-type"] == "application/json"
    assert json.loads(text)["error"]["message"] == "boom"
    status, headers, text = post_stream(srv, {"stream": False, "input": "x"})
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(json.loads(text)["output"][0]["content"][0]["text"]) == PLAN


def test_frame_format() -> None:
    assert sse.frame({"type": "response.created", "n": 1}) == (
        b'event: response.created\ndata: {"type": "response.created", "n": 1}\n\n'
    )
