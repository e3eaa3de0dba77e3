"""The Codex e2e harness itself, without the Codex CLI: the fake model's stream and the
network-namespace relay."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .codex_cli import RELAY_SCRIPT, netns_prefix
from .fake_codex_model import FakeCodexModel, Patch, Rule, Say, Shell
from .netns_relay import UnixToTcp


def _post(url: str, body: dict[str, object]) -> list[tuple[str, dict[str, Any]]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["content-type"] == "text/event-stream"
        text = response.read().decode()
    events = []
    for block in text.strip().split("\n\n"):
        kind_line, data_line = block.split("\n")
        kind = kind_line.removeprefix("event: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert data["type"] == kind
        events.append((kind, data))
    return events


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeCodexModel]:
    with FakeCodexModel(workdir="/w", log_path=tmp_path / "log.jsonl") as server:
        yield server


def test_a_turn_streams_items_the_way_codex_reads_them(fake: FakeCodexModel) -> None:
    fake.script = [[Say("hi"), Shell("ls {workdir}", call_id="c1"), Patch("P", call_id="c2")]]
    events = _post(fake.base_url + "/responses", {"input": []})
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "response.created"
    assert kinds[-1] == "response.completed"
    done = [data["item"] for kind, data in events if kind == "response.output_item.done"]
    assert [item["type"] for item in done] == ["message", "function_call", "custom_tool_call"]
    assert done[0]["content"][0]["text"] == "hi"
    assert json.loads(done[1]["arguments"]) == {"cmd": "ls /w"}
    assert (done[1]["name"], done[1]["call_id"]) == ("exec_command", "c1")
    assert (done[2]["name"], done[2]["input"], done[2]["call_id"]) == ("apply_patch", "P", "c2")
    completed = events[-1][1]["response"]
    assert isinstance(completed, dict)
    assert completed["output"] == done
    assert completed["usage"]["total_tokens"] == 110
    assert "response.output_text.delta" in kinds


def test_a_rule_answers_once_before_the_script(fake: FakeCodexModel, tmp_path: Path) -> None:
    fake.script = ["first", "second"]
    fake.rules = [Rule("REASON", "the rule")]
    url = fake.base_url + "/responses"

    def text(body: dict[str, object]) -> object:
        items = [d["item"] for k, d in _post(url, body) if k == "response.output_item.done"]
        return items[0]["content"][0]["text"]

    assert text({"input": "x"}) == "first"
    assert text({"input": "REASON"}) == "the rule"
    assert text({"input": "REASON"}) == "second"
    assert text({"input": "REASON"}) == "Done."
    assert [r.answered for r in fake.requests] == [
        "script:0",
        "rule:REASON",
        "script:1",
        "exhausted",
    ]
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [entry["answered"] for entry in logged] == [r.answered for r in fake.requests]


def test_other_paths_are_not_model_calls(fake: FakeCodexModel) -> None:
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(fake.base_url + "/models", timeout=10)
    with err.value:  # the error holds the response and its socket: closed here
        assert err.value.code == 404
    assert fake.model_requests == []


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        data = b"hello from the host namespace"
        self.send_response(200)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_the_relay_carries_a_loopback_port_into_the_namespace() -> None:
    prefix = netns_prefix()
    if prefix is None:
        pytest.skip("no loopback-only network namespace on this machine")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    server.daemon_threads = False  # server_close() joins its handlers: none keeps a socket open
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    fetch = f"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/').read().decode())"
    try:
        bare = subprocess.run(
            [*prefix, sys.executable, str(RELAY_SCRIPT), "--", sys.executable, "-c", fetch],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        with UnixToTcp([port]) as relay:
            forwards = [f"--forward={spec}" for spec in relay.forwards()]
            relayed = subprocess.run(
                [*prefix, sys.executable, str(RELAY_SCRIPT), *forwards, "--"]
                + [sys.executable, "-c", fetch],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
    finally:
        server.shutdown()
        server.server_close()
    assert bare.returncode != 0, "the namespace should not see the host's loopback"
    assert relayed.returncode == 0, relayed.stderr
    assert relayed.stdout.strip() == "hello from the host namespace"
