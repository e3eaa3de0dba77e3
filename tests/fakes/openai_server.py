"""A stdlib-only fake of the OpenAI HTTP API for tests.

It serves ``POST /v1/responses`` (also streamed, with ``"stream": true``, as Codex
asks for it), ``POST /v1/chat/completions`` and
``GET /v1/models`` on 127.0.0.1 and answers from queued :class:`Reply`
objects.  Every request is logged as a :class:`LoggedRequest` so tests can
count attempts (``retry_count``), inspect the structured-output schema name
and assert on the prompt text.

In-process use::

    with FakeOpenAI() as srv:
        srv.enqueue({"tasks": []}, schema="Plan")
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test")
        ...

Standalone use (for benchmarks and end-to-end tests)::

    python -m tests.fakes.openai_server --port-file PORT_FILE \\
        [--default-json JSON] [--script SCRIPT_JSON] [--log LOG_JSONL]

The process writes the port to PORT_FILE once listening and serves until
SIGTERM (or SIGINT).  SCRIPT_JSON maps schema names (``"*"`` for any request)
to lists of replies; each element is a body object or
``{"__reply__": {<Reply fields>}}``.  The same element format is accepted by
``--default-json``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import http.server
import itertools
import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, cast

from tests.fakes import sse

__all__ = ["FakeOpenAI", "LoggedRequest", "Reply", "reply_from_json"]

ANY_SCHEMA = "*"
# The Stop's folded review-and-verdict call (the bridge's `schemas.Judgement`).
FOLDED_SCHEMA = "Judgement"
NEUTRAL_VERDICT: dict[str, object] = {
    "decision": "continue",
    "reason": "no verdict was scripted",
    "current_task_done": False,
    "instructions": "",
    "findings": [],
}

_STATUS_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


@dataclass
class Reply:
    """One scripted answer of the fake server.

    Precedence: ``drop`` > ``raw`` > error body (``status >= 400``) >
    refusal > ``text`` > ``body``.
    """

    body: object | None = None
    text: str | None = None
    raw: bytes | str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay: float = 0.0
    refusal: str | None = None
    incomplete: bool = False
    error_code: str | None = None
    input_tokens: int = 1000
    cached_tokens: int = 0
    output_tokens: int = 200
    drop: bool = False
    # Held until the test sets it (or the server closes): "still out" for as long as a test
    # needs, which no delay can promise on a loaded machine.
    hold: threading.Event | None = None
    # Extensions beyond the basic set.
    reasoning_tokens: int = 0
    phase: str | None = "final_answer"  # responses message phase; None omits it
    finish_reason: str | None = None  # chat: overrides "stop" / "length"

    def output_text(self) -> str:
        """The answer text that a success envelope carries."""
        if self.text is not None:
            return self.text
        if self.body is None:
            return ""
        return json.dumps(_jsonable(self.body))


def _jsonable(obj: object) -> object:
    """Turn pydantic models (found by duck typing) into plain JSON data."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump) and not isinstance(obj, type):
        return dump(mode="json")
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


_REPLY_FIELDS = frozenset(f.name for f in dataclasses.fields(Reply))


def reply_from_json(item: object) -> Reply:
    """Build a Reply from a script element: a body, or ``{"__reply__": {...}}``."""
    if isinstance(item, dict) and set(item) == {"__reply__"}:
        spec = item["__reply__"]
        if not isinstance(spec, dict):
            raise ValueError("__reply__ must map Reply field names to values")
        unknown = set(spec) - _REPLY_FIELDS
        if unknown:
            raise ValueError(f"unknown Reply fields: {sorted(unknown)}")
        return Reply(**spec)
    return Reply(body=item)


@dataclass
class LoggedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, object] | None
    raw_body: str
    schema_name: str | None
    api: str
    retry_count: int
    prompt_text: str
    received_at: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _api_for(method: str, path: str) -> str:
    clean = path.split("?", 1)[0].rstrip("/")
    if method == "POST" and clean == "/v1/responses":
        return "responses"
    if method == "POST" and clean == "/v1/chat/completions":
        return "chat"
    return "other"


def _schema_name(api: str, body: dict[str, object] | None) -> str | None:
    if body is None:
        return None
    fmt: object = None
    if api == "responses":
        text = body.get("text")
        if isinstance(text, dict):
            fmt = text.get("format")
    elif api == "chat":
        rf = body.get("response_format")
        if isinstance(rf, dict):
            fmt = rf.get("json_schema")
    if isinstance(fmt, dict):
        name = fmt.get("name")
        if isinstance(name, str):
            return name
    return None


def _collect_text(node: object, out: list[str]) -> None:
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, list):
        for item in node:
            _collect_text(item, out)
    elif isinstance(node, dict):
        for key in ("text", "content", "output", "refusal"):
            if key in node:
                _collect_text(node[key], out)


def _prompt_text(api: str, body: dict[str, object] | None) -> str:
    if body is None:
        return ""
    parts: list[str] = []
    if api == "responses":
        _collect_text(body.get("instructions"), parts)
        _collect_text(body.get("input"), parts)
    elif api == "chat":
        _collect_text(body.get("messages"), parts)
    return "\n".join(parts)


def _retry_count(headers: dict[str, str]) -> int:
    try:
        return int(headers.get("x-stainless-retry-count", "0"))
    except ValueError:
        return 0


def _error_body(status: int, message: str, code: str | None) -> dict[str, object]:
    fallback = "server_error" if status >= 500 else "invalid_request_error"
    err_type = _STATUS_ERROR_TYPES.get(status, fallback)
    if code == "insufficient_quota":
        err_type = "insufficient_quota"
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


def _usage_responses(reply: Reply) -> dict[str, object]:
    return {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": reply.cached_tokens},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def _usage_chat(reply: Reply) -> dict[str, object]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
    }


class FakeOpenAI:
    """Threaded fake OpenAI server on 127.0.0.1 (ephemeral port by default)."""

    def __init__(
        self,
        *,
        default: Reply | None = None,
        responder: Callable[[LoggedRequest], Reply | None] | None = None,
        log_path: str | None = None,
        port: int = 0,
    ) -> None:
        self.default: Reply | None = default
        self.responder: Callable[[LoggedRequest], Reply | None] | None = responder
        self.requests: list[LoggedRequest] = []
        # The model list (`GET /v1/models`): its ids, or the HTTP status it fails with.
        # With the bridge's default manager model, which doctor checks the list for.
        self.models: list[str] = ["fake-model", "gpt-6.2-sol"]
        self.models_status = 200
        self._log_path = log_path
        self._lock = threading.Lock()
        self._general: collections.deque[Reply] = collections.deque()
        self._by_schema: dict[str, collections.deque[Reply]] = {}
        self._closing = threading.Event()
        self._conns: set[socket.socket] = set()
        self._ids = itertools.count(1)
        self._httpd = _Server(("127.0.0.1", port), _Handler, self)
        self.port: int = int(self._httpd.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-openai-{self.port}",
            daemon=True,
        )
        self._thread.start()

    # -- scripting ---------------------------------------------------------

    def enqueue(self, *replies: Reply | object, schema: str | None = None) -> None:
        """Queue replies; non-Reply objects mean ``Reply(body=obj)``.

        With ``schema`` the replies only serve requests whose structured-output
        schema name equals it (``"*"`` is the same as no schema).
        """
        items = [r if isinstance(r, Reply) else Reply(body=r) for r in replies]
        with self._lock:
            if schema is None or schema == ANY_SCHEMA:
                self._general.extend(items)
            else:
                self._by_schema.setdefault(schema, collections.deque()).extend(items)

    def pending(self, schema: str | None = None) -> int:
        """Number of queued replies (general queue, or one schema's queue)."""
        with self._lock:
            if schema is None:
                return len(self._general)
            return len(self._by_schema.get(schema, ()))

    def requests_for(
        self, api: str | None = None, schema: str | None = None
    ) -> list[LoggedRequest]:
        """Logged requests filtered by api ("responses"/"chat"/"other") and schema name."""
        with self._lock:
            return [
                r
                for r in self.requests
                if (api is None or r.api == api) and (schema is None or r.schema_name == schema)
            ]

    # -- lifecycle ---------------------------------------------------------

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self._httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        self._thread.join(timeout=2.0)

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals used by the handler ---------------------------------------

    def _record(self, req: LoggedRequest) -> None:
        line = json.dumps(req.to_dict()) + "\n" if self._log_path else ""
        with self._lock:
            self.requests.append(req)
            if self._log_path:
                with Path(self._log_path).open("a", encoding="utf-8") as fh:
                    fh.write(line)

    def _next_reply(self, req: LoggedRequest) -> Reply:
        with self._lock:
            if req.schema_name is not None:
                queue = self._by_schema.get(req.schema_name)
                if queue:
                    return queue.popleft()
        if req.schema_name == FOLDED_SCHEMA:
            folded = self._folded(req)
            if folded is not None:
                return folded
        with self._lock:
            if self._general:
                return self._general.popleft()
        if self.responder is not None:
            chosen = self.responder(req)
            if chosen is not None:
                return chosen
        if self.default is not None:
            return self.default
        return Reply(
            status=503,
            headers={"x-should-retry": "false"},
            text=f"fake OpenAI server: no reply queued for {req.path} (schema {req.schema_name!r})",
            error_code="no_reply_queued",
        )

    def _part(self, req: LoggedRequest, schema: str) -> Reply | None:
        """One part of a folded answer: queued for `schema`, else the responder's."""
        with self._lock:
            queue = self._by_schema.get(schema)
            if queue:
                return queue.popleft()
        if self.responder is not None:
            return self.responder(dataclasses.replace(req, schema_name=schema))
        return None

    def _folded(self, req: LoggedRequest) -> Reply | None:
        """A Stop's folded review and verdict (schema `Judgement`) with nothing queued for it,
        answered from a queued (or responded) Review reply and Verdict reply: tests script
        the manager's two judgements as they would for two calls. A part that is not a plain
        answer (an error, a dropped connection) is the whole reply, as one call fails whole; with no
        Verdict reply the verdict part is a neutral `continue` (moot when the review blocks)."""
        review = self._part(req, "Review")
        if review is None:
            return None
        verdict = self._part(req, "Verdict") or Reply(body=NEUTRAL_VERDICT)
        for part in (review, verdict):
            if part.body is None or part.status >= 400 or part.drop or part.raw is not None:
                return part
        return dataclasses.replace(
            review,
            body={"review": _jsonable(review.body), "verdict": _jsonable(verdict.body)},
            delay=max(review.delay, verdict.delay),
            input_tokens=review.input_tokens,
            output_tokens=review.output_tokens + verdict.output_tokens,
        )

    def _next_id(self) -> int:
        return next(self._ids)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[http.server.BaseHTTPRequestHandler],
        fake: FakeOpenAI,
    ) -> None:
        self.fake = fake
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # Skip HTTPServer.server_bind: its reverse DNS lookup can be slow.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"

    @property
    def fake(self) -> FakeOpenAI:
        return cast(_Server, self.server).fake

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake._conns.add(self.connection)

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._conns.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    # -- request handling ------------------------------------------------------

    def _read_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        if length > 0:
            return self.rfile.read(length)
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def _handle(self) -> None:
        fake = self.fake
        raw = self._read_body()
        raw_text = raw.decode("utf-8", errors="replace")
        body: dict[str, object] | None = None
        if raw:
            try:
                parsed = json.loads(raw_text)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                body = parsed
        headers = {k.lower(): v for k, v in self.headers.items()}
        api = _api_for(self.command, self.path)
        req = LoggedRequest(
            method=self.command,
            path=self.path,
            headers=headers,
            body=body,
            raw_body=raw_text,
            schema_name=_schema_name(api, body),
            api=api,
            retry_count=_retry_count(headers),
            prompt_text=_prompt_text(api, body),
            received_at=time.time(),
        )
        fake._record(req)

        if api == "other":
            if self.command == "GET" and self.path.split("?", 1)[0].rstrip("/") == "/v1/models":
                if fake.models_status != 200:
                    message = f"fake OpenAI server: model list answered {fake.models_status}"
                    self._send_json(
                        fake.models_status, _error_body(fake.models_status, message, None)
                    )
                else:
                    self._send_json(200, _models_body(fake.models))
            else:
                message = f"fake OpenAI server: unknown endpoint {self.command} {self.path}"
                self._send_json(404, _error_body(404, message, None))
            return

        reply = fake._next_reply(req)
        if reply.delay > 0 and fake._closing.wait(reply.delay):
            self.close_connection = True
            return
        while reply.hold is not None and not reply.hold.is_set():
            if fake._closing.wait(0.02):
                self.close_connection = True
                return
        if reply.drop or fake._closing.is_set():
            self.close_connection = True
            return
        self._answer(api, req, reply)

    def _answer(self, api: str, req: LoggedRequest, reply: Reply) -> None:
        headers = dict(reply.headers)
        if reply.raw is not None:
            data = reply.raw.encode("utf-8") if isinstance(reply.raw, str) else reply.raw
            self._send(reply.status, data, reply.content_type, headers)
            return
        if reply.status >= 400:
            message = reply.text or f"fake error {reply.status}"
            error = _error_body(reply.status, message, reply.error_code)
            self._send_json(reply.status, error, headers)
            return
        n = self.fake._next_id()
        model = req.body.get("model") if req.body else None
        model_name = model if isinstance(model, str) else "fake-model"
        if api == "responses":
            payload = _responses_envelope(n, model_name, req.body, reply)
            if req.body is not None and req.body.get("stream") is True:
                self._stream(reply.status, payload, headers)
                return
        else:
            payload = _chat_envelope(n, model_name, reply)
        self._send_json(reply.status, payload, headers, content_type=reply.content_type)

    def _stream(self, status: int, response: dict[str, object], headers: dict[str, str]) -> None:
        """The answer as server-sent events, one chunk each (see ``sse.py``)."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("x-request-id", f"req_fake_{self.fake._next_id()}")
            for key, value in headers.items():
                if key.lower() not in ("content-length", "content-type", "transfer-encoding"):
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in sse.events(response):
                data = sse.frame(event)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _send_json(
        self,
        status: int,
        payload: object,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), content_type, headers or {})

    def _send(self, status: int, data: bytes, content_type: str, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            lowered = {k.lower() for k in headers}
            if "content-type" not in lowered:
                self.send_header("Content-Type", content_type)
            if "x-request-id" not in lowered:
                self.send_header("x-request-id", f"req_fake_{self.fake._next_id()}")
            for key, value in headers.items():
                if key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True


def _models_body(ids: list[str]) -> dict[str, object]:
    return {
        "object": "list",
        "data": [
            {"id": i, "object": "model", "created": 0, "owned_by": "fake-openai"} for i in ids
        ],
    }


def _responses_envelope(
    n: int, model: str, request: dict[str, object] | None, reply: Reply
) -> dict[str, object]:
    item_status = "incomplete" if reply.incomplete else "completed"
    content: list[dict[str, object]]
    if reply.refusal is not None:
        content = [{"type": "refusal", "refusal": reply.refusal}]
    else:
        text_part: dict[str, object] = {
            "type": "output_text",
            "text": reply.output_text(),
            "annotations": [],
            "logprobs": [],
        }
        content = [text_part]
    message: dict[str, object] = {
        "type": "message",
        "id": f"msg_fake_{n}",
        "status": item_status,
        "role": "assistant",
        "content": content,
    }
    if reply.phase is not None:
        message["phase"] = reply.phase
    text_cfg = request.get("text") if request else None
    return {
        "id": f"resp_fake_{n}",
        "object": "response",
        "created_at": int(time.time()),
        "status": item_status,
        "model": model,
        "output": [message],
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if reply.incomplete else None,
        "instructions": request.get("instructions") if request else None,
        "metadata": {},
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "top_p": 1.0,
        "tool_choice": "auto",
        "tools": [],
        "text": text_cfg if isinstance(text_cfg, dict) else {"format": {"type": "text"}},
        "service_tier": "default",
        "store": False,
        "usage": _usage_responses(reply),
    }


def _chat_envelope(n: int, model: str, reply: Reply) -> dict[str, object]:
    finish = reply.finish_reason or ("length" if reply.incomplete else "stop")
    message: dict[str, object] = {"role": "assistant", "annotations": []}
    if reply.refusal is not None:
        message["content"] = None
        message["refusal"] = reply.refusal
    else:
        message["content"] = reply.output_text()
        message["refusal"] = None
    return {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": _usage_chat(reply),
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
    }


# -- command line ---------------------------------------------------------------


def _load_script(path: str) -> dict[str, list[Reply]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("script must be a JSON object mapping schema names to lists")
    script: dict[str, list[Reply]] = {}
    for name, items in data.items():
        if not isinstance(items, list):
            raise ValueError(f"script entry {name!r} must be a list")
        script[str(name)] = [reply_from_json(item) for item in items]
    return script


def _write_port_file(path: str, port: int) -> None:
    target = Path(path)
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    tmp.write_text(f"{port}\n", encoding="utf-8")
    tmp.replace(target)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.openai_server",
        description="Fake OpenAI HTTP server for tests.",
    )
    parser.add_argument("--port-file", required=True, help="write the listening port here")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: ephemeral)")
    parser.add_argument("--default-json", help="default reply: a JSON body or {'__reply__': {...}}")
    parser.add_argument("--script", help="JSON file of per-schema reply lists ('*' = any schema)")
    parser.add_argument("--log", help="append each request as one JSON line to this file")
    args = parser.parse_args(argv)

    default = reply_from_json(json.loads(args.default_json)) if args.default_json else None
    script = _load_script(args.script) if args.script else {}

    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)

    srv = FakeOpenAI(default=default, log_path=args.log, port=args.port)
    try:
        for name, replies in script.items():
            srv.enqueue(*replies, schema=name)
        _write_port_file(args.port_file, srv.port)
        while not stop.wait(0.2):
            pass
    finally:
        srv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
