"""A stdlib-only fake of the Anthropic Messages API for driving the real Claude Code CLI offline.

Usage::

    with FakeAnthropic(workdir=repo) as fake:
        fake.script = [
            [Text("Writing."), ToolUse("Write", {"file_path": "{workdir}/a.txt", "content": "x"})],
            [Text("Done.")],
        ]
        run = run_claude(..., anthropic_url=fake.url)
        assert "MARKER" in fake.body_text(-1)

A *main* request (one whose ``tools`` include Write, Edit, Bash or Read) consumes the next
scripted turn. A turn is a list of blocks (``Text`` / ``ToolUse``), a single block, a plain
string, or a callable ``(request_body: dict) -> list of blocks``. A ``chooser`` (a callable
``(raw_body) -> turn or None``, e.g. ``tests.fakes.keyed.Keyed``) is asked first: processes
asking at once each get their own script by what their request says. When the script is used up,
the server answers a short text with ``end_turn``; it never answers with an error, because
errors make the CLI retry with backoff.

Side requests (no agent tools, e.g. ``type: "prompt"`` hooks) get a short text, or a minimal
instance of the requested JSON schema when ``output_config.format.type == "json_schema"``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MAIN_TOOL_NAMES = frozenset({"Write", "Edit", "Bash", "Read"})
EXHAUSTED_TEXT = "Done."
SIDE_TEXT = "OK."
MODEL_ID = "claude-test"
_REDACTED_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})


@dataclass(frozen=True)
class Text:
    """An assistant text block."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """An assistant tool_use block. String values in ``input`` may contain ``{workdir}``."""

    name: str
    input: dict[str, Any]
    id: str | None = None


Block = Text | ToolUse
Turn = Sequence[Block] | Block | str | Callable[[dict[str, Any]], Any]


@dataclass
class LoggedRequest:
    """One request as the fake server saw it (API keys redacted)."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    raw: str
    body: Any
    main: bool = False
    turn: int | None = None  # index into the script of the turn consumed, if any
    status: int = 0
    response_blocks: list[dict[str, Any]] = field(default_factory=list)
    time: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body,
            "main": self.main,
            "turn": self.turn,
            "status": self.status,
            "response_blocks": self.response_blocks,
            "time": self.time,
        }


def _substitute(value: Any, workdir: str | None) -> Any:
    if workdir is None:
        return value
    if isinstance(value, str):
        return value.replace("{workdir}", workdir)
    if isinstance(value, list):
        return [_substitute(v, workdir) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, workdir) for k, v in value.items()}
    return value


def _minimal_instance(schema: Any, name: str = "") -> Any:
    """A small value satisfying a simple JSON schema: required properties only (all if none
    are listed), strings ``"OK."``, zeros, empty arrays, and booleans ``False`` except a
    property named ``ok``, which is ``True`` (so a ``type: "prompt"`` hook lets Claude stop)."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _minimal_instance(schema[key][0], name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties", {})
        wanted = schema.get("required") or list(props)
        return {key: _minimal_instance(props.get(key, {}), key) for key in wanted}
    defaults: dict[Any, Any] = {
        "array": [],
        "string": SIDE_TEXT,
        "integer": 0,
        "number": 0,
        "null": None,
    }
    if kind == "boolean":
        return name == "ok"
    if kind in ("integer", "number") and "minimum" in schema:
        return schema["minimum"]
    return defaults.get(kind)


def is_main_request(body: Any) -> bool:
    """A request of the agent loop: its ``tools`` include one of Write, Edit, Bash, Read."""
    if not isinstance(body, dict):
        return False
    tools = body.get("tools") or []
    return any(isinstance(t, dict) and t.get("name") in MAIN_TOOL_NAMES for t in tools)


class FakeAnthropic:
    """Fake Anthropic Messages API on 127.0.0.1 (ephemeral port), served from a daemon thread."""

    def __init__(
        self,
        script: Sequence[Turn] | None = None,
        *,
        workdir: str | Path | None = None,
        log_path: str | Path | None = None,
        side_answer: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.script: Sequence[Turn] = list(script or [])
        # Optional ``(request_body) -> blocks`` for side requests (default: text or schema).
        self.side_answer = side_answer
        self.workdir = str(workdir) if workdir is not None else None
        self.log_path = Path(log_path) if log_path is not None else None
        self.requests: list[LoggedRequest] = []
        # How many main requests to answer with a 429 rate_limit_error before the script.
        self.rate_limit_main = 0
        self.errors: list[str] = []  # exceptions raised while answering (e.g. in callable turns)
        # Asked first with a main request's raw body: a turn, or None to go on to the script.
        self.chooser: Callable[[str], Turn | None] | None = None
        # Every answer's reported input tokens when set (each request's cost then known, whatever
        # the CLI's prompt weighs), else the request's size.
        self.input_tokens: int | None = None
        self._next_turn = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        if self._server is not None:
            return self
        handler = type("BoundHandler", (_Handler,), {"fake": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},  # shutdown() waits up to one poll interval
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeAnthropic is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- helpers for tests ---------------------------------------------------------------------

    def main_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if r.main]

    def side_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if not r.main]

    def body_text(self, i: int) -> str:
        """Raw body text of request ``i`` (all requests; negative indexes allowed)."""
        with self._lock:
            return self.requests[i].raw

    def main_body_text(self, i: int) -> str:
        """Raw body text of main request ``i`` (negative indexes allowed)."""
        return self.main_requests()[i].raw

    @property
    def turns_consumed(self) -> int:
        with self._lock:
            return min(self._next_turn, len(self.script))

    def dump_log(self) -> str:
        """All requests as JSONL (for failure messages or artifacts)."""
        with self._lock:
            return "".join(json.dumps(r.to_json()) + "\n" for r in self.requests)

    # -- request handling (called from handler threads) ----------------------------------------

    def _record(self, entry: LoggedRequest) -> None:
        # Recorded before the answer is sent, so a finished CLI run never races the log.
        with self._lock:
            self.requests.append(entry)

    def _write_log(self, entry: LoggedRequest) -> None:
        if self.log_path is None:
            return
        with self._lock, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry.to_json()) + "\n")

    def _rate_limited(self) -> bool:
        with self._lock:
            if self.rate_limit_main <= 0:
                return False
            self.rate_limit_main -= 1
            return True

    def _take_turn(self) -> tuple[int | None, Turn | None]:
        with self._lock:
            index = self._next_turn
            if index >= len(self.script):
                return None, None
            self._next_turn += 1
            return index, self.script[index]

    def _blocks_for(self, entry: LoggedRequest) -> list[dict[str, Any]]:
        body = entry.body if isinstance(entry.body, dict) else {}
        if not entry.main:
            return self._side_blocks(body)
        chosen = self.chooser(entry.raw) if self.chooser is not None else None
        index, turn = (None, chosen) if chosen is not None else self._take_turn()
        entry.turn = index
        if turn is None:
            return [{"type": "text", "text": EXHAUSTED_TEXT}]
        try:
            return self._render(turn(body) if callable(turn) else turn)
        except Exception as exc:  # never answer an error to the CLI: it would retry
            self.errors.append(f"turn {index}: {exc!r}")
            return [{"type": "text", "text": f"(fake turn {index} failed: {exc!r})"}]

    def _side_blocks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if self.side_answer is not None:
            try:
                return self._render(self.side_answer(body))
            except Exception as exc:
                self.errors.append(f"side answer: {exc!r}")
                return [{"type": "text", "text": SIDE_TEXT}]
        fmt = (body.get("output_config") or {}).get("format") or {}
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return [{"type": "text", "text": json.dumps(_minimal_instance(fmt.get("schema")))}]
        return [{"type": "text", "text": SIDE_TEXT}]

    def _render(self, turn: Any) -> list[dict[str, Any]]:
        if turn is None:
            items: list[Any] = []
        elif isinstance(turn, (str, Text, ToolUse)):
            items = [turn]
        else:
            items = list(turn)
        blocks: list[dict[str, Any]] = []
        for item in items:
            if isinstance(item, str):
                item = Text(item)
            if isinstance(item, Text):
                blocks.append({"type": "text", "text": _substitute(item.text, self.workdir)})
            elif isinstance(item, ToolUse):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": item.id or f"toolu_{uuid.uuid4().hex[:24]}",
                        "name": item.name,
                        "input": _substitute(item.input, self.workdir),
                    }
                )
            else:
                raise TypeError(f"unsupported block in scripted turn: {item!r}")
        if not blocks:
            blocks.append({"type": "text", "text": EXHAUSTED_TEXT})
        return blocks


def _message(blocks: list[dict[str, Any]], model: str, input_tokens: int) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": 5 + sum(len(json.dumps(b)) // 4 for b in blocks),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _sse_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            first: dict[str, Any] = {"type": "text", "text": ""}
            text = block["text"]
            pieces = [text[i : i + 64] for i in range(0, len(text), 64)] or [""]
            deltas = [{"type": "text_delta", "text": p} for p in pieces]
        else:
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            payload = json.dumps(block["input"])
            pieces = [payload[i : i + 64] for i in range(0, len(payload), 64)]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _model_object(model_id: str) -> dict[str, Any]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id,
        "created_at": "2025-01-01T00:00:00Z",
    }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropic  # set on the bound subclass
    _current: LoggedRequest
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        pass

    # -- plumbing --------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline().strip().split(b";")[0]
                size = int(size_line or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _entry(self) -> LoggedRequest:
        parts = urlsplit(self.path)
        raw = self._read_body().decode("utf-8", errors="replace") if self.command == "POST" else ""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {
            k.lower(): ("<redacted>" if k.lower() in _REDACTED_HEADERS else v)
            for k, v in self.headers.items()
        }
        return LoggedRequest(
            method=self.command,
            path=parts.path,
            query=parts.query,
            headers=headers,
            raw=raw,
            body=body,
            time=time.time(),
        )

    def _send_json(self, status: int, payload: Any, *, head_only: bool = False) -> None:
        data = json.dumps(payload).encode()
        self._current.status = status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
        self.end_headers()
        if not head_only:
            self.wfile.write(data)
        self.wfile.flush()

    def _send_error(self, status: int, kind: str, message: str) -> None:
        self._send_json(status, {"type": "error", "error": {"type": kind, "message": message}})

    def _send_sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self._current.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
        self.end_headers()
        for name, data in events:
            chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # -- routes ----------------------------------------------------------------------------

    def _dispatch(self) -> None:
        entry = self._entry()
        self._current = entry
        self.fake._record(entry)
        try:
            self._route(entry)
        finally:
            self.fake._write_log(entry)

    def _route(self, entry: LoggedRequest) -> None:
        method, path = entry.method, entry.path.rstrip("/") or "/"
        if path == "/" and method in ("GET", "HEAD"):
            self._send_json(200, {"ok": True}, head_only=method == "HEAD")
            return
        if method == "POST" and path == "/v1/messages":
            self._messages(entry)
            return
        if method == "POST" and path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": max(1, len(entry.raw) // 4)})
            return
        if method == "GET" and path == "/v1/models":
            model = _model_object(MODEL_ID)
            self._send_json(
                200,
                {"data": [model], "has_more": False, "first_id": MODEL_ID, "last_id": MODEL_ID},
            )
            return
        if method == "GET" and path.startswith("/v1/models/"):
            self._send_json(200, _model_object(path.split("/v1/models/", 1)[1]))
            return
        self._send_error(404, "not_found_error", f"{method} {entry.path} not found")

    def _messages(self, entry: LoggedRequest) -> None:
        body = entry.body if isinstance(entry.body, dict) else {}
        entry.main = is_main_request(body)
        if entry.main and self.fake._rate_limited():
            self._send_error(429, "rate_limit_error", "Number of requests has exceeded your limit")
            return
        blocks = self.fake._blocks_for(entry)
        entry.response_blocks = blocks
        tokens = self.fake.input_tokens or max(1, len(entry.raw) // 4)
        message = _message(blocks, str(body.get("model") or MODEL_ID), tokens)
        if body.get("stream"):
            self._send_sse(_sse_events(message))
        else:
            self._send_json(200, message)

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch()

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch()

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch()

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch()

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch()

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch()
