"""Fast checks of the fake Messages API and the install helper (no Claude Code run)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .claude_cli import ClaudeInstallError, ensure_claude, parse_stream_json
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

AGENT_TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def call(
    fake: FakeAnthropic, method: str, path: str, body: Any = None
) -> tuple[int, dict[str, str], str]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        fake.url + path,
        data=data,
        method=method,
        headers={"x-api-key": "sk-secret-value", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def assemble(events: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], str]:
    """Rebuild content blocks and the stop reason from SSE events, like an SDK would."""
    blocks: list[dict[str, Any]] = []
    partial: dict[int, str] = {}
    stop_reason = ""
    for name, data in events:
        if name == "content_block_start":
            blocks.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif name == "content_block_stop" and data["index"] in partial:
            blocks[data["index"]]["input"] = json.loads(partial[data["index"]])
        elif name == "message_delta":
            stop_reason = data["delta"]["stop_reason"]
    return blocks, stop_reason


def test_streamed_script_turns_and_exhaustion(tmp_path: Path) -> None:
    long_text = "x" * 300
    with FakeAnthropic(workdir=tmp_path) as fake:
        fake.script = [
            [
                Text(long_text),
                ToolUse("Write", {"file_path": "{workdir}/f.txt", "content": "{workdir}" * 20}),
            ],
            lambda body: [Text(f"saw {len(body['messages'])} messages")],
        ]
        request = {"model": "claude-test", "stream": True, "tools": AGENT_TOOLS}
        turns = []
        for n in range(3):
            status, headers, text = call(
                fake, "POST", "/v1/messages?beta=true", {**request, "messages": [{}] * n}
            )
            assert status == 200
            assert headers["Content-Type"] == "text/event-stream"
            events = parse_sse(text)
            names = [name for name, _ in events]
            assert names[:2] == ["message_start", "ping"]
            assert names[-2:] == ["message_delta", "message_stop"]
            assert events[0][1]["message"]["content"] == []
            turns.append(assemble(events))

    (first, stop0), (second, stop1), (third, stop2) = turns
    assert stop0 == "tool_use"
    assert first[0] == {"type": "text", "text": long_text}
    assert first[1]["name"] == "Write"
    assert first[1]["id"].startswith("toolu_")
    assert first[1]["input"] == {"file_path": f"{tmp_path}/f.txt", "content": str(tmp_path) * 20}
    assert (second, stop1) == ([{"type": "text", "text": "saw 1 messages"}], "end_turn")
    assert stop2 == "end_turn" and third[0]["type"] == "text"

    assert [r.turn for r in fake.main_requests()] == [0, 1, None]
    assert fake.turns_consumed == 2
    assert all(r.headers["x-api-key"] == "<redacted>" for r in fake.requests)
    assert "sk-secret-value" not in fake.dump_log()
    assert fake.body_text(1) == fake.requests[1].raw
    assert json.loads(fake.body_text(1))["messages"] == [{}]
    assert fake.requests[0].query == "beta=true"


def test_non_streamed_side_requests_and_other_routes(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with FakeAnthropic(script=[[Text("main only")]], log_path=log) as fake:
        status, _, text = call(fake, "POST", "/v1/messages", {"model": "m", "messages": []})
        assert status == 200
        message = json.loads(text)
        assert message["type"] == "message" and message["stop_reason"] == "end_turn"
        assert message["content"][0]["type"] == "text"

        schema = {
            "type": "object",
            "properties": {
                "ok": {"type": "boolean"},
                "reason": {"type": "string"},
                "impossible": {"type": "boolean"},
            },
            "required": ["ok", "reason"],
        }
        body = {
            "messages": [],
            "output_config": {"format": {"type": "json_schema", "schema": schema}},
        }
        _, _, text = call(fake, "POST", "/v1/messages", body)
        assert json.loads(json.loads(text)["content"][0]["text"]) == {"ok": True, "reason": "OK."}

        assert call(fake, "POST", "/v1/messages/count_tokens", {"messages": []})[0] == 200
        status, _, text = call(fake, "GET", "/v1/models")
        assert status == 200 and json.loads(text)["data"][0]["type"] == "model"
        assert json.loads(call(fake, "GET", "/v1/models/claude-x")[2])["id"] == "claude-x"
        assert call(fake, "HEAD", "/")[0] == 200
        assert call(fake, "GET", "/")[0] == 200
        status, _, text = call(fake, "GET", "/v1/nope")
        assert status == 404
        assert json.loads(text) == {
            "type": "error",
            "error": {"type": "not_found_error", "message": "GET /v1/nope not found"},
        }

        # Side requests never consume the script.
        assert fake.main_requests() == []
        assert fake.turns_consumed == 0
        assert [r.status for r in fake.requests] == [200, 200, 200, 200, 200, 200, 200, 404]

    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [entry["path"] for entry in logged][-1] == "/v1/nope"
    assert all(entry["headers"]["x-api-key"] == "<redacted>" for entry in logged)


def test_failing_callable_turn_answers_text() -> None:
    def broken(body: dict[str, Any]) -> list[Any]:
        raise ValueError("boom")

    with FakeAnthropic(script=[broken]) as fake:
        request = {"stream": False, "tools": AGENT_TOOLS, "messages": []}
        status, _, text = call(fake, "POST", "/v1/messages", request)
    assert status == 200
    assert "boom" in json.loads(text)["content"][0]["text"]
    assert fake.errors and "boom" in fake.errors[0]


def test_parse_stream_json_keeps_garbage_lines() -> None:
    events, unparsed = parse_stream_json('{"type": "a"}\nnot json\n\n[1]\n{"type": "result"}\n')
    assert [e["type"] for e in events] == ["a", "result"]
    assert unparsed == ["not json", "[1]"]


def test_ensure_claude_without_npm_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ClaudeInstallError, match="npm is not on PATH"):
        ensure_claude(tmp_path / "cache")
