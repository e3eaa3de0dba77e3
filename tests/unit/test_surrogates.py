"""Lone surrogates in JSON from outside: scrubbed at the door, so every later write can encode."""

from __future__ import annotations

import json

import pytest

from autopilot_codex import hookio, surrogates
from autopilot_codex.manager.schemas import Verdict


def test_a_lone_surrogate_breaks_a_utf8_write_without_the_scrub() -> None:
    # The attack: JSON may spell half a pair, and the decoded text cannot be written as UTF-8.
    text = json.loads(b'"\\ud800"')
    with pytest.raises(UnicodeEncodeError):
        text.encode("utf-8")


def test_scrub_replaces_lone_halves_in_keys_and_values_at_any_depth() -> None:
    data = json.loads(
        b'{"a\\udc00": ["x\\ud800y", {"k": "\\udfff"}], "n": 1, "ok": "\\ud83d\\ude00"}'
    )
    clean = surrogates.scrub(data)
    assert clean == {"a\ufffd": ["x\ufffdy", {"k": "\ufffd"}], "n": 1, "ok": "\U0001f600"}
    json.dumps(clean, ensure_ascii=False).encode("utf-8")  # writable


def test_scrub_walks_what_json_accepted_without_recursion() -> None:
    depth = 50_000
    deep: object = "\ud800"
    for _ in range(depth):
        deep = [deep]
    clean = surrogates.scrub(deep)
    for _ in range(depth):
        assert isinstance(clean, list)
        clean = clean[0]
    assert clean == "\ufffd"


@pytest.mark.parametrize(
    ("raw", "possible"),
    [
        (b'{"a": "\\ud800"}', True),
        (b'{"a": "\\uDFFF"}', True),
        (b'{"a": "\\u00e9 \\u4e2d"}', False),
        (b'{"a": "plain"}', False),
        ('{"a": "é"}', False),
    ],
)
def test_the_cheap_look_finds_every_escape_that_may_decode_to_one(
    raw: bytes | str, possible: bool
) -> None:
    assert surrogates.possible(raw) is possible


def test_hook_input_arrives_scrubbed() -> None:
    event = hookio.parse(
        b'{"session_id": "s\\ud800", "last_assistant_message": "\\udc80!"}', "Stop"
    )
    assert event.session_id == "s\ufffd"
    assert event.last_assistant_message == "\ufffd!"


def test_a_manager_answer_arrives_scrubbed() -> None:
    body = json.loads(
        b'{"decision": "done", "reason": "\\ud800", "current_task_done": true,'
        b' "instructions": "", "findings": []}'
    )
    assert Verdict.model_validate(body).reason == "\ufffd"


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    "raw",
    [
        DEEP,  # json.loads raises RecursionError, which no `except ValueError` catches
        b'{"n": ' + b"9" * 5_000 + b"}",  # past int's digit limit: ValueError, not a decode error
        b'{"n": ' + b"9" * 400 + b"}",  # an int, but the first float() of it overflows
        b'{"n": -' + b"9" * 400 + b"}",
        b'{"n": ' + b"9" * 309 + b"}",  # as many digits as the largest float, and larger
        b'{"a": "\xff"}',  # not UTF-8
        b"{",
    ],
)
def test_loads_makes_every_unreadable_text_a_value_error(raw: bytes) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the door's one promise is the type
        surrogates.loads(raw)
    if raw.isascii():  # as a file's text, read as UTF-8, gives it
        with pytest.raises(ValueError):  # noqa: PT011
            surrogates.loads(raw.decode("ascii"))


def test_loads_keeps_what_a_float_holds_and_scrubs_lone_halves() -> None:
    big = "1" + "0" * 308  # 1e308: a float holds it
    assert surrogates.loads(f'{{"n": {big}, "f": 1e999}}')["n"] == int(big)
    assert surrogates.loads(b'{"\\udc00": ["\\ud800"]}') == {"\ufffd": ["\ufffd"]}
    assert surrogates.loads('"\\ud83d\\ude00"') == "\U0001f600"  # a whole pair stays


def test_the_spend_readers_and_the_codex_backend_read_deep_json_as_garbage() -> None:
    from autopilot_codex.hosts.claude import transcript
    from autopilot_codex.hosts.codex import rollout
    from autopilot_codex.manager import codex_backend
    from autopilot_codex.manager.attempts import Charged
    from autopilot_codex.manager.pricing import Usage

    assert transcript._usage(b'{"usage": ' + DEEP + b"}", "") is None
    assert rollout._record(b'{"token_count": ' + DEEP + b"}", "event_msg") is None
    assert codex_backend._read_events(DEEP.decode() + "\n")[1] == ""
    with pytest.raises(Charged):
        codex_backend._parse(Verdict, DEEP.decode(), Usage())


def test_a_headless_host_line_nested_too_deep_is_noise_and_a_rollout_line_is_corrupt() -> None:
    from pathlib import Path

    from autopilot_codex.errors import BridgeError
    from autopilot_codex.rounds import rollout
    from autopilot_codex.stream import StreamState

    # A round's host prints its events as JSON lines; a model's tool input can nest them deep.
    assert StreamState("claude").feed_line(DEEP.decode()) is False
    with pytest.raises(BridgeError, match="corrupt at line 1"):
        rollout.parse(DEEP + b"\n{}\n", Path("rollout.jsonl"))
