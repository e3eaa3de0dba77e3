"""A stdlib-only fake of the OpenAI Responses API that plays a scripted Codex implementer.

Codex (with a custom ``model_provider``, ``wire_api = "responses"``) only ever sends a
streamed ``POST /v1/responses``. Every such request gets the next scripted turn::

    with FakeCodexModel(workdir=repo) as fake:
        fake.script = [
            [Say("Writing."), Patch("*** Begin Patch\\n*** Add File: a.txt\\n+x\\n*** End Patch\\n")],
            [Shell("cat a.txt")],
            "All done.",
        ]
        fake.rules = [Rule("REASON #1", "Fixed after the Stop hook.")]

A turn is a list of items (``Say`` / ``Shell`` / ``Patch`` / ``Call``, any other function
call such as ``request_user_input``), one item, or a plain string (a message). Before the script, the first unused ``Rule`` whose ``when`` occurs in the raw body
answers (once): that is how a Stop-hook continuation gets its own reply, since the request
carries the whole history. When the script is used up the fake says ``EXHAUSTED_TEXT``; it
answers with an error only when a turn says so (``Fail``), which fails the Codex run (no
retries are configured). A ``Hold`` turn keeps the request waiting until the test releases it
(to interrupt a run mid-turn).

The stream follows what Codex reads: ``response.created``, per item ``output_item.added`` (and
text deltas for messages) then ``output_item.done`` with the full item, then
``response.completed`` with ``usage``. Every request is logged (optionally as JSONL).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EXHAUSTED_TEXT = "Done."
MODEL_ID = "gpt-5.5"
_REDACTED_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


@dataclass(frozen=True)
class Say:
    """An assistant message."""

    text: str


@dataclass(frozen=True)
class Shell:
    """An ``exec_command`` function call (hooks see it as ``Bash``). ``{workdir}`` is
    substituted."""

    cmd: str
    call_id: str | None = None


@dataclass(frozen=True)
class Patch:
    """An ``apply_patch`` custom (freeform) tool call. ``{workdir}`` is substituted."""

    patch: str
    call_id: str | None = None


@dataclass(frozen=True)
class Call:
    """Any other function call, e.g. ``spawn_agent`` in the ``collaboration`` namespace."""

    name: str
    arguments: dict[str, Any]
    namespace: str | None = None
    call_id: str | None = None


Item = Say | Shell | Patch | Call


@dataclass(frozen=True)
class Fail:
    """An HTTP error instead of a stream: a model failure as Codex sees one."""

    status: int = 500
    message: str = "scripted model failure"


@dataclass
class Hold:
    """Wait until ``release`` is set (``timeout_s`` at most), then answer ``turn``;
    ``arrived`` is set when the request comes in."""

    turn: Sequence[Item] | Item | str
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    timeout_s: float = 60.0


Turn = Sequence[Item] | Item | str | Fail | Hold


@dataclass
class Rule:
    """Answer ``turn`` to the first request whose raw body contains ``when`` (once)."""

    when: str
    turn: Turn
    used: bool = False


@dataclass
class LoggedRequest:
    """One request as the fake saw it (credentials redacted)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: str
    body: Any
    answered: str = ""  # "script:<n>", "rule:<when>", "exhausted" or "" (not a model call)
    output: list[dict[str, Any]] = field(default_factory=list)
    time: float = 0.0
    # The usage the answer reported ({}: the fixed default, or no answer).
    usage: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "answered": self.answered,
            "output": self.output,
            "time": self.time,
        }

    @property
    def input(self) -> list[dict[str, Any]]:
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [str(t.get("name")) for t in tools or [] if isinstance(t, dict)]

    def outputs_for(self, call_id: str) -> list[str]:
        """The ``output`` of every tool-result item answering ``call_id``."""
        kinds = ("function_call_output", "custom_tool_call_output")
        return [
            str(i.get("output"))
            for i in self.input
            if i.get("type") in kinds and i.get("call_id") == call_id
        ]


def _texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [str(c.get("text", "")) for c in content if isinstance(c, dict)]


def message_texts(request: LoggedRequest, role: str) -> list[str]:
    """Texts of the request's input messages of one role (``user``, ``developer``, ...)."""
    out: list[str] = []
    for item in request.input:
        if item.get("type") == "message" and item.get("role") == role:
            out.extend(_texts(item))
    return out


class FakeCodexModel:
    """Fake Responses API on 127.0.0.1 (ephemeral port), served from a daemon thread."""

    def __init__(
        self,
        script: Sequence[Turn] | None = None,
        *,
        rules: Sequence[Rule] = (),
        workdir: str | Path | None = None,
        log_path: str | Path | None = None,
    ) -> None:
        self.script: list[Turn] = list(script or [])
        self.rules: list[Rule] = list(rules)
        self.workdir = str(workdir) if workdir is not None else None
        self.log_path = Path(log_path) if log_path is not None else None
        self.requests: list[LoggedRequest] = []
        self.errors: list[str] = []
        # Asked first, with the raw body and the headers: a turn, or None to go on to the rules
        # and the script (a test that answers each Codex thread apart).
        self.chooser: Callable[[str, dict[str, str]], Turn | None] | None = None
        # The usage a response reports, from the request's raw body; None: a fixed small usage.
        self.usage: Callable[[str], dict[str, Any]] | None = None
        self._next_turn = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeCodexModel:
        if self._server is None:
            handler = type("BoundHandler", (_Handler,), {"fake": self})
            server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
            server.daemon_threads = True
            self._server = server
            self._thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="fake-codex-model",
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

    def __enter__(self) -> FakeCodexModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeCodexModel is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The provider ``base_url``; Codex appends ``/responses``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- inspection ----------------------------------------------------------------------------

    @property
    def model_requests(self) -> list[LoggedRequest]:
        return [r for r in self.requests if r.answered]

    def raw(self, index: int = -1) -> str:
        return self.model_requests[index].raw

    # -- answering -----------------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    def choose(self, raw: str, headers: dict[str, str] | None = None) -> tuple[str, Turn]:
        """The turn that answers a request with this raw body, and why it was chosen."""
        if self.chooser is not None:
            chosen = self.chooser(raw, headers or {})
            if chosen is not None:
                return "chooser", chosen
        with self._lock:
            for rule in self.rules:
                if not rule.used and rule.when in raw:
                    rule.used = True
                    return f"rule:{rule.when}", rule.turn
            if self._next_turn < len(self.script):
                n = self._next_turn
                self._next_turn += 1
                return f"script:{n}", self.script[n]
        return "exhausted", EXHAUSTED_TEXT

    def render(self, turn: Sequence[Item | str] | Item | str) -> list[dict[str, Any]]:
        """Output items of one turn, in the Responses API's shapes."""
        if isinstance(turn, (str, Say, Shell, Patch, Call)):
            turn = [turn]
        items: list[dict[str, Any]] = []
        for part in turn:
            if isinstance(part, str):
                part = Say(part)
            items.append(self._item(part))
        return items

    def _item(self, part: Item) -> dict[str, Any]:
        if isinstance(part, Say):
            return {
                "type": "message",
                "id": self.next_id("msg"),
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": part.text, "annotations": []}],
            }
        if isinstance(part, Call):
            item = {
                "type": "function_call",
                "id": self.next_id("fc"),
                "status": "completed",
                "call_id": part.call_id or self.next_id("call"),
                "name": part.name,
                "arguments": json.dumps(part.arguments),
            }
            return item if part.namespace is None else {**item, "namespace": part.namespace}
        if isinstance(part, Shell):
            return {
                "type": "function_call",
                "id": self.next_id("fc"),
                "status": "completed",
                "call_id": part.call_id or self.next_id("call_sh"),
                "name": "exec_command",
                "arguments": json.dumps({"cmd": self._subst(part.cmd)}),
            }
        return {
            "type": "custom_tool_call",
            "id": self.next_id("ctc"),
            "status": "completed",
            "call_id": part.call_id or self.next_id("call_patch"),
            "name": "apply_patch",
            "input": self._subst(part.patch),
        }

    def _subst(self, text: str) -> str:
        return text.replace("{workdir}", self.workdir) if self.workdir else text

    def record(self, req: LoggedRequest) -> None:
        with self._lock:
            self.requests.append(req)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(req.to_json()) + "\n")


def realistic_usage(raw: str) -> dict[str, Any]:
    """Usage as the real API reports it for this request: about four characters a token of the
    whole body in, half of it cached after the first request (the prompt cache), a reply's
    worth out with some reasoning."""
    input_tokens = max(1, len(raw) // 4)
    cached = input_tokens // 2 if '"assistant"' in raw else 0  # not the session's first request
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": 400,
        "output_tokens_details": {"reasoning_tokens": 300},
        "total_tokens": input_tokens + 400,
    }


def sse_events(
    response_id: str, items: list[dict[str, Any]], usage: dict[str, Any] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event type, data)`` sequence of one streamed response."""
    base = {"id": response_id, "object": "response", "created_at": int(time.time())}
    base["model"] = MODEL_ID
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**base, "status": "in_progress", "output": []}})
    ]
    for index, item in enumerate(items):
        events.append(("response.output_item.added", _added(index, item)))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append(("response.output_text.delta", {**where, "delta": text}))
            events.append(("response.output_text.done", {**where, "text": text}))
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
    usage = usage or {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    done = {**base, "status": "completed", "output": items, "usage": usage}
    events.append(("response.completed", {"response": done}))
    return [
        (kind, {"type": kind, "sequence_number": n, **data})
        for n, (kind, data) in enumerate(events)
    ]


def _added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    started = {**item, "status": "in_progress"}
    if item["type"] == "message":
        started["content"] = []
    elif item["type"] == "function_call":
        started["arguments"] = ""
    else:
        started["input"] = ""
    return {"output_index": index, "item": started}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeCodexModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._not_found()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length).decode("utf-8", errors="replace") if length else ""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {
            k.lower(): ("<redacted>" if k.lower() in _REDACTED_HEADERS else v)
            for k, v in self.headers.items()
        }
        req = LoggedRequest("POST", self.path, headers, raw, body, time=time.time())
        if not self.path.rstrip("/").endswith("/responses"):
            self.fake.record(req)
            self._not_found()
            return
        req.answered, turn = self.fake.choose(raw, headers)
        if isinstance(turn, Hold):
            turn.arrived.set()
            turn.release.wait(turn.timeout_s)
            turn = turn.turn
        if isinstance(turn, Fail):
            self.fake.record(req)
            self._error(turn)
            return
        try:
            req.output = self.fake.render(turn)
        except Exception as exc:  # a broken script must show in the test, not hang Codex
            self.fake.errors.append(f"{type(exc).__name__}: {exc}")
            req.answered, req.output = "exhausted", self.fake.render(EXHAUSTED_TEXT)
        self.fake.record(req)
        # The client may be gone (a run interrupted while a Hold waited): nothing to tell it.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            usage = self.fake.usage(raw) if self.fake.usage is not None else None
            req.usage = usage or {}
            self._stream(sse_events(self.fake.next_id("resp"), req.output, usage))

    def _stream(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for kind, data in events:
            chunk = f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _error(self, fail: Fail) -> None:
        error = {"message": fail.message, "type": "server_error", "code": "server_error"}
        data = json.dumps({"error": error}).encode()
        self.send_response(fail.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _not_found(self) -> None:
        data = b'{"error": {"message": "not found", "type": "invalid_request_error"}}'
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
