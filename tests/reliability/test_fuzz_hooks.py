"""Garbage on a hook's stdin, for every hook entry point, while a loop is running.

Whatever arrives, a hook exits 0, prints nothing or one JSON object, never crashes, and never
blocks or denies because of the garbage. A block from a well-formed Stop (the manager said
continue) or a deny of a well-formed dangerous command is the loop working, not a failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autopilot_codex import hookio
from tests.conftest import HookRun, payload, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import (
    SESSION,
    Hook,
    answer_of,
    blocks,
    marker_of,
    state_of,
    state_path,
)
from tests.reviews import wait_reviews, wait_shadow

EVENTS = ("PreToolUse", "PostToolUse", "Stop", "SessionStart", "PreCompact")
TOOLS = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "apply_patch",
    "Bash",
    "exec_command",
)
MB = 1024 * 1024

FUZZ = settings(
    max_examples=100,
    deadline=None,
    # The same examples on every run: the "reached the engine" floor below must not depend on luck.
    derandomize=True,
    database=None,  # nothing written outside the test's own directories
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# Any JSON value, nested a little.
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=10,
)
nasty_text = st.sampled_from(
    ["", " ", "null", "\x00", "a\x00b", "\ud800", "é", "\u202e", "../../..", "~", "$HOME", "*"]
)


def nasty_paths(repo: Path) -> st.SearchStrategy[Any]:
    return st.sampled_from(
        [
            str(repo),
            str(repo / "sub" / "dir"),
            str(repo / "missing" / "deeper"),
            "relative/dir",
            "/",
            "",
            "a\x00b",
            "\ud800",
            "x" * 5000,
            "/" + "a/" * 3000,
        ]
    )


def well_formed(event: str, repo: Path) -> dict[str, Any]:
    tools: dict[str, dict[str, Any]] = {
        "PreToolUse": {"tool_name": "Bash", "tool_input": {"command": "ls"}},
        "PostToolUse": {
            "tool_name": "Write",
            "tool_input": {"file_path": str(repo / "file1.txt"), "content": "x"},
            "tool_response": {"type": "create"},
        },
        "SessionStart": {"source": "compact"},
        "PreCompact": {"trigger": "auto"},
    }
    return payload(event, repo, **tools.get(event, {}))


@st.composite
def payloads(draw: st.DrawFn, event: str, repo: Path) -> dict[str, Any]:
    """A real payload for `event`, with some fields dropped or replaced by hostile values."""
    text = st.text(max_size=60) | nasty_text
    hostile: dict[str, st.SearchStrategy[Any]] = {
        "session_id": st.sampled_from(["other", "", "null", None]) | junk,
        "cwd": nasty_paths(repo) | junk,
        "hook_event_name": st.sampled_from(EVENTS) | junk,
        "transcript_path": text | junk,
        "tool_name": st.sampled_from(TOOLS) | text | junk,
        "tool_input": junk
        | st.fixed_dictionaries(
            {},
            optional={
                "command": text | junk | st.sampled_from(["ls", "rm -rf /", "git push -f"]),
                "file_path": text | junk | nasty_paths(repo),
                "notebook_path": text | junk,
                "path": text | junk,
                "content": text | junk,
            },
        ),
        "tool_response": junk,
        "stop_hook_active": st.booleans() | junk,
        "last_assistant_message": text | junk,
        "source": st.sampled_from(["compact", "resume", "clear", "startup"]) | junk,
        "trigger": st.sampled_from(["auto", "manual"]) | junk,
    }
    data = well_formed(event, repo)
    for key in draw(st.sets(st.sampled_from(sorted(hostile)), max_size=4)):
        if draw(st.booleans()):
            data.pop(key, None)
        else:
            data[key] = draw(hostile[key])
    data.update(draw(st.dictionaries(st.text(max_size=12), junk, max_size=2)))
    return data


@st.composite
def stdin_bytes(draw: st.DrawFn, event: str, repo: Path) -> bytes:
    """Encoded payloads, then broken in the ways a pipe or a host can break them."""
    data = draw(payloads(event, repo) | junk)
    padding = draw(st.sampled_from([0, 0, 0, 0, MB, 3 * MB]))
    if padding and isinstance(data, dict):
        data = {**data, "padding": "p" * padding}
    raw = json.dumps(data, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    damage = draw(
        st.sampled_from(
            ["none", "none", "none", "truncate", "invalid-utf8", "utf16", "bom", "binary", "blank"]
        )
    )
    if damage == "truncate":
        raw = raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
    elif damage == "invalid-utf8":
        at = draw(st.integers(0, len(raw)))
        raw = (
            raw[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]))
            + raw[at:]
        )
    elif damage == "utf16":
        raw = raw.decode("utf-8", "surrogatepass").encode("utf-16", "surrogatepass")
    elif damage == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif damage == "binary":
        raw = draw(st.binary(max_size=2000))
    elif damage == "blank":
        raw = draw(st.sampled_from([b"", b" ", b"\n", b"\t\r\n", b"\x00"]))
    return raw


def decoded(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def may_block(event: str, raw: bytes) -> bool:
    """Only a well-formed request may be blocked or denied."""
    data = decoded(raw)
    if not isinstance(data, dict):
        return False
    if event == "Stop":
        # An owned, running loop whose manager answers continue blocks a real Stop.
        return data.get("session_id") == SESSION
    if event == "PreToolUse":
        # Rails judge only a named tool with an object of arguments.
        return data.get("tool_name") in TOOLS and isinstance(data.get("tool_input"), dict)
    return False  # PostToolUse reviews an empty diff here; the others never block


class Fixture:
    """The running loop, reset to the same state before every example."""

    def __init__(self, repo: Path, hook: Hook) -> None:
        self.repo = repo
        self.hook = hook
        # Payloads that passed the gate and parsed: the ones the engine or the rails judged.
        self.reached = 0
        self.state = state_path(repo).read_bytes()
        # The bridge's record of what it wrote goes back with the state it vouches for.
        self.witness = state_path(repo).with_name("witness.json").read_bytes()
        self.marker = marker_of(repo).read_bytes()
        # And the ledger: a witness put back over a longer ledger is an older copy replayed.
        self.ledger = state_path(repo).with_name("events.jsonl").read_bytes()

    def reset(self) -> None:
        from autopilot_codex.store import Store

        # Under the loop's lock: a background worker that freed the slot may still be
        # finishing its last write (the witness's ledger anchor) when the next example starts.
        with Store(self.repo).locked():
            state_path(self.repo).write_bytes(self.state)
            state_path(self.repo).with_name("witness.json").write_bytes(self.witness)
            marker_of(self.repo).parent.mkdir(parents=True, exist_ok=True)
            marker_of(self.repo).write_bytes(self.marker)
            state_path(self.repo).with_name("events.jsonl").write_bytes(self.ledger)

    def check(self, event: str, raw: bytes) -> HookRun:
        self.reset()
        result = self.hook(event, raw)
        # A Write starts a background review (of the empty diff): let it end before the
        # next example rewrites state.json under it.
        wait_reviews(self.repo)
        # And the shadow history's snapshot of it, which may add to the ledger.
        wait_shadow(self.repo)
        assert result.code == 0
        assert "Traceback" not in result.stdout
        assert "internal error" not in result.stderr, result.stderr
        answer = answer_of(result)  # nothing, or exactly one JSON object
        if blocks(answer):
            assert may_block(event, raw), (event, raw[:300], answer)
        # Garbage never ends, corrupts or disowns the loop.
        after = state_of(self.repo)
        assert after["status"] == "running", after.get("stop_reason")
        assert after["session_id"] == SESSION
        return result


@pytest.fixture
def fuzz(
    planned: Path,
    manager: FakeOpenAI,
    hook: Hook,
    monkeypatch: pytest.MonkeyPatch,
) -> Fixture:
    (planned / "sub" / "dir").mkdir(parents=True)
    # A payload without a usable cwd falls back to the process's: make that the repository,
    # so garbage reaches the engine instead of stopping at the gate.
    monkeypatch.chdir(planned)
    monkeypatch.setenv("AUTOPILOT_CODEX_NO_PROGRESS_LIMIT", "1000")
    manager.default = Reply(body=verdict_body("continue"))
    fixture = Fixture(planned, hook)
    parse = hookio.parse

    def counted(raw: bytes, event: str, host: Any = None) -> hookio.HookInput:
        parsed = parse(raw, event, host)
        fixture.reached += 1
        return parsed

    monkeypatch.setattr(hookio, "parse", counted)
    return fixture


@pytest.mark.parametrize("event", EVENTS)
def test_generated_stdin_never_breaks_a_hook(fuzz: Fixture, event: str) -> None:
    @FUZZ
    @given(raw=stdin_bytes(event, fuzz.repo))
    def run(raw: bytes) -> None:
        fuzz.check(event, raw)

    run()
    # The generator is only worth its time if garbage gets past the gate into the engine.
    # The loop's own events pass the gate only with the owner's session id (a payload without
    # one used to pass and be refused by the engine), so fewer examples get that far.
    assert fuzz.reached >= 12, fuzz.reached


HOSTILE = {
    "empty": b"",
    "nul": b"\x00",
    "deep-array": b"[" * 200_000 + b"]" * 200_000,
    "deep-object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "deep-in-field": b'{"session_id": "sess-1", "tool_input": '
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}",
    "nul-cwd": b'{"session_id": "sess-1", "cwd": "a\\u0000b"}',
    "surrogate-cwd": b'{"session_id": "sess-1", "cwd": "\\ud800"}',
    "long-cwd": json.dumps({"session_id": SESSION, "cwd": "x" * 5000}).encode(),
    "deep-cwd": json.dumps({"session_id": SESSION, "cwd": "/" + "a/" * 3000}).encode(),
    "nul-path": json.dumps(
        {"session_id": SESSION, "tool_name": "Write", "tool_input": {"file_path": "a\x00b"}}
    ).encode(),
    "surrogate-path": json.dumps(
        {"session_id": SESSION, "tool_name": "Edit", "tool_input": {"file_path": "\ud800"}}
    ).encode(),
    "nul-command": json.dumps(
        {"session_id": SESSION, "tool_name": "Bash", "tool_input": {"command": "cat a\x00b"}}
    ).encode(),
    "list-command": json.dumps(
        {"session_id": SESSION, "tool_name": "exec_command", "tool_input": {"command": [1, None]}}
    ).encode(),
    # A lone surrogate in the text a Stop carries: it reached the engine and crashed a write.
    "surrogate-message": b'{"session_id": "sess-1", "hook_event_name": "Stop", '
    + b'"stop_hook_active": false, "last_assistant_message": "\\ud800"}',
    "huge-message": json.dumps(
        {"session_id": SESSION, "last_assistant_message": "m" * (4 * MB)}
    ).encode(),
    "over-the-read-cap": b'{"session_id": "sess-1", "x": "' + b"y" * (33 * MB) + b'"}',
}


@pytest.mark.parametrize("event", EVENTS)
def test_hostile_stdin_never_breaks_a_hook(fuzz: Fixture, event: str) -> None:
    """Inputs a generator rarely reaches: deep nesting, paths the OS refuses, the read cap."""
    for name, raw in HOSTILE.items():
        try:
            fuzz.check(event, raw)
        except AssertionError as exc:
            raise AssertionError(f"{event} with {name}: {exc}") from exc


def test_a_well_formed_dangerous_command_is_still_denied(fuzz: Fixture) -> None:
    """The fuzz oracle allows this deny; make sure the rails are really on while fuzzing."""
    data = payload(
        "PreToolUse", fuzz.repo, tool_name="Bash", tool_input={"command": "git push --force"}
    )
    out = answer_of(fuzz.check("PreToolUse", json.dumps(data).encode()))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
