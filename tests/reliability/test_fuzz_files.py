"""Hostile bytes in the files a hook reads besides its stdin, while a loop is running.

The implementer can write or damage what the bridge parses: the state, its witness, the
finding ledger, the user's config, the host's transcript. Whatever such a file holds, a hook
exits 0, prints nothing or one JSON object, and never fails with an internal error: JSON
nested past the recursion limit, a number past the digit limit or too large for a float, a lone
surrogate or bytes that are not UTF-8 are a damaged file, read as one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import payload, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import Hook, answer_of, state_path
from tests.reliability.test_fuzz_hooks import Fixture
from tests.reviews import wait_reviews, wait_shadow

DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
# Past the 4,300 digits `json.loads` turns into an int: a ValueError, not a JSONDecodeError.
HUGE = b"9" * 5_000
# Under that limit, but no float holds it: `float()` raises OverflowError.
BIG = b"9" * 4_200


def _field(path: Path, name: str, value: bytes) -> None:
    """Set `name` in the JSON object `path` holds to the raw JSON text `value`."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data[name] = "@hostile@"
    text = json.dumps(data).encode().replace(b'"@hostile@"', value)
    path.write_bytes(text)


def _whole(path: Path, raw: bytes) -> None:
    path.write_bytes(raw)


def _usage_line(tokens: bytes) -> bytes:
    return (
        b'{"type":"assistant","timestamp":"2099-01-01T00:00:00Z","message":{"id":"m1",'
        b'"model":"claude-opus-4","usage":{"input_tokens":' + tokens + b',"output_tokens":1}}}\n'
    )


def _files(repo: Path, home: Path) -> dict[str, Path]:
    loop = state_path(repo).parent
    return {
        "state": loop / "state.json",
        "witness": loop / "witness.json",
        "findings": loop / "findings.json",
        "hostfiles": loop / "hostfiles.json",
        "nested": loop / "nested.json",
        "config": home / "config.json",
        "transcript": repo.parent / "transcript.jsonl",
    }


# (file, how it is damaged)
HOSTILE: dict[str, tuple[str, Callable[[Path], None]]] = {
    "config-deep": ("config", lambda p: _whole(p, DEEP)),
    "config-deep-object": ("config", lambda p: _whole(p, DEEP_OBJECT)),
    "config-huge-int": ("config", lambda p: _whole(p, b'{"budget_usd": ' + HUGE + b"}")),
    "config-not-utf8": ("config", lambda p: _whole(p, b'{"model": "\xff"}')),
    "config-null-checks": ("config", lambda p: _whole(p, b'{"checks": null}')),
    "config-endless-check": (
        "config",
        lambda p: _whole(p, b'{"checks": [{"command": "true", "timeout_s": 1e999}]}'),
    ),
    "config-nan-check": (
        "config",
        lambda p: _whole(p, b'{"checks": [{"command": "true", "timeout_s": NaN}]}'),
    ),
    "state-deep": ("state", lambda p: _whole(p, DEEP)),
    "state-deep-field": ("state", lambda p: _field(p, "iteration", DEEP)),
    "state-huge-int": ("state", lambda p: _field(p, "iteration", HUGE)),
    "state-float-overflow": ("state", lambda p: _field(p, "budget_used_usd", BIG)),
    "state-surrogate-style": ("state", lambda p: _field(p, "style", b'"\\ud800"')),
    "witness-deep": ("witness", lambda p: _whole(p, DEEP)),
    "witness-surrogate": ("witness", lambda p: _field(p, "last", b'"\\ud800"')),
    "witness-non-ascii-seal": ("witness", lambda p: _field(p, "mac", b'"\\u00e9"')),
    "findings-deep": ("findings", lambda p: _whole(p, DEEP)),
    "host-files-deep": ("hostfiles", lambda p: _whole(p, DEEP)),
    "nested-baseline-deep": ("nested", lambda p: _whole(p, DEEP)),
    "transcript-deep": ("transcript", lambda p: _whole(p, b'{"usage": ' + DEEP + b"}\n")),
    "transcript-float-overflow": ("transcript", lambda p: _whole(p, _usage_line(BIG))),
}

EVENTS: dict[str, dict[str, Any]] = {
    "Stop": {},
    "PreToolUse": {"tool_name": "Bash", "tool_input": {"command": "ls"}},
    "PostToolUse": {
        "tool_name": "Write",
        "tool_input": {"file_path": "file1.txt", "content": "x"},
        "tool_response": {"type": "create"},
    },
    "SessionStart": {"source": "compact"},
    "UserPromptSubmit": {"prompt": "go on"},
}


@pytest.fixture
def loop(planned: Path, manager: FakeOpenAI, hook: Hook) -> Fixture:
    manager.default = Reply(body=verdict_body("continue"))
    return Fixture(planned, hook)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_damaged_file_never_breaks_a_hook(loop: Fixture, isolated: Path, name: str) -> None:
    target, damage = HOSTILE[name]
    path = _files(loop.repo, isolated)[target]
    for event, extra in EVENTS.items():
        loop.reset()
        damage(path)
        if target == "transcript":
            extra = {**extra, "transcript_path": str(path)}
        result = loop.hook(event, json.dumps(payload(event, loop.repo, **extra)).encode())
        if target != "state" and state_path(loop.repo).exists():
            # A state the bridge could not trust is moved aside: no review is in flight then.
            wait_reviews(loop.repo)
        wait_shadow(loop.repo)
        where = f"{name} at {event}"
        assert result.code == 0, where
        assert "Traceback" not in result.stdout + result.stderr, (where, result.stderr)
        assert "internal error" not in result.stderr, (where, result.stderr)
        answer_of(result)  # nothing, or exactly one JSON object
        if target != "state":  # the next reset puts the state back
            path.unlink(missing_ok=True)


def test_logs_skip_an_event_line_nested_too_deep(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.cli import main

    events = state_path(planned).with_name("events.jsonl")
    events.write_bytes(events.read_bytes() + DEEP + b"\n")
    capsys.readouterr()
    code = main(["-C", str(planned), "logs"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "internal error" not in out.err
    assert "plan" in out.out  # the lines before it are still shown


@pytest.mark.parametrize("value", [b"Infinity", b"-Infinity", b"NaN"])
def test_a_report_reads_a_number_that_is_no_number_as_none(
    planned: Path, capsys: pytest.CaptureFixture[str], value: bytes
) -> None:
    from autopilot_codex.cli import main

    _field(state_path(planned), "budget_used_usd", value)
    capsys.readouterr()
    code = main(["-C", str(planned), "report"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "internal error" not in out.err


@pytest.mark.parametrize("name", ["implementer_unpriced", "completed_tasks"])
@pytest.mark.parametrize("verb", ["logs", "report", "loops"])
def test_the_views_read_a_list_that_is_no_list_as_empty(
    planned: Path, capsys: pytest.CaptureFixture[str], name: str, verb: str
) -> None:
    """The views read state.json as it is, never quarantining: a field the implementer set to
    the wrong type is read as none, not iterated."""
    from autopilot_codex.cli import main

    path = state_path(planned)
    if name == "completed_tasks":
        data = json.loads(path.read_text(encoding="utf-8"))
        data["autopilot"][name] = 7
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        _field(path, name, b"true")
    capsys.readouterr()
    code = main(["-C", str(planned), verb])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "internal error" not in out.err
