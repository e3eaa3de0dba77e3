"""A Claude Code session run as the Agent SDK runs it when questions matter: `-p
--input-format stream-json --permission-prompt-tool stdio` (docs/hosts-questions.md). Plain
`-p` has no `AskUserQuestion`; here the CLI puts the question to its client as a
`can_use_tool` control request, and the harness answers it as the user, from the task.

Every other permission the CLI asks its client for is refused, as plain `-p` refuses what its
flags do not allow, so a question-capable session may do nothing more than a plain one."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from autopilot_codex.host import Estimate
from autopilot_codex.hosts.claude.headless import HEADLESS
from autopilot_codex.rounds.rollout import Outcome
from autopilot_codex.rounds.runner import RoundResult, host_base
from autopilot_codex.stream import StreamState

from .user import ScriptedUser, questions

QUESTION_TOOL = "AskUserQuestion"
FLAGS = (
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
)
REFUSED = "Not allowed in this run."
POLL_S = 0.2
KILL_GRACE_S = 5.0
# After the host exits, how long its stream may stay open (held by a process it left behind).
ORPHAN_GRACE_S = 5.0

# Called with the session's id just before the user's answer goes back (the supervised arms
# resume their loop there, as a user who answers would).
BeforeAnswer = Callable[[str], None]


def command(env: Mapping[str, str], extra: Sequence[str], wall: Sequence[str]) -> list[str]:
    return [*host_base("claude", HEADLESS, env), *FLAGS, *extra, *wall]


def _message(prompt: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": prompt}}


def _reply(request_id: object, response: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    }


def permission(request: Mapping[str, Any], user: ScriptedUser, session: str) -> dict[str, Any]:
    """The client's answer to one `can_use_tool`: a question gets the user's answer as the
    tool's own answers (the model reads "The user answered ..."); anything else is refused."""
    tool, given = request.get("tool_name"), request.get("input")
    if tool != QUESTION_TOOL or not isinstance(given, dict):
        return {"behavior": "deny", "message": REFUSED}
    answers = {asked: user.reply(text) for asked, text in questions(given)}
    return {"behavior": "allow", "updatedInput": {**given, "answers": answers}}


class _Session:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.session_id = ""
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def send(self, data: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            return
        with contextlib.suppress(OSError):
            stdin.write((json.dumps(data) + "\n").encode())
            stdin.flush()

    def close_input(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def end(self) -> None:
        """The session's whole process group: TERM, a grace, then KILL."""
        self.close_input()
        for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait)
        # A stream still held by a process that left the group stays with its reader.
        self.reader.join(timeout=KILL_GRACE_S)
        if not self.reader.is_alive() and self.proc.stdout is not None:
            self.proc.stdout.close()


def run_session(
    prompt: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    extra_args: Sequence[str],
    wall_args: Sequence[str],
    timeout_s: float,
    budget_usd: float,
    user: ScriptedUser,
    stderr: IO[bytes],
    before_answer: BeforeAnswer = lambda _session: None,
) -> RoundResult:
    """One session to its final result, the time cap, or the budget."""
    spend = Estimate()

    def read(state: StreamState, event: dict[str, Any]) -> None:
        HEADLESS.read(state, event)
        HEADLESS.estimate(spend, event, {})

    state = StreamState("claude", reader=read)
    try:
        proc = subprocess.Popen(
            command(env, extra_args, wall_args),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
        )
    except OSError as exc:
        return RoundResult("crashed", None, "", "", None, None, f"cannot start claude: {exc}")
    session = _Session(proc)
    session.send(_message(prompt))
    try:
        outcome = _follow(session, state, spend, user, timeout_s, budget_usd, before_answer)
    finally:
        session.end()
    cost = max(state.cost_usd or 0.0, spend.usd) if (state.cost_usd or spend.usd) else None
    detail = state.error
    if outcome == "ok" and (not state.finished or state.error):
        outcome, detail = "stream_error", state.error or "the stream ended without a final event"
    elif outcome == "timeout":
        detail = f"no end after {timeout_s:.0f}s"
    elif outcome == "budget":
        detail = f"stopped at ${cost or 0.0:.4f} spent: the budget is used up"
    return RoundResult(
        outcome, proc.returncode, state.last_message, state.last_action, cost, state.tokens, detail
    )


def _follow(
    session: _Session,
    state: StreamState,
    spend: Estimate,
    user: ScriptedUser,
    timeout_s: float,
    budget_usd: float,
    before_answer: BeforeAnswer,
) -> Outcome:
    deadline = time.monotonic() + timeout_s
    exited_at: float | None = None
    while time.monotonic() < deadline:
        try:
            raw = session.lines.get(timeout=POLL_S)
        except queue.Empty:
            if session.proc.poll() is not None:
                exited_at = exited_at or time.monotonic()
                if time.monotonic() - exited_at > ORPHAN_GRACE_S:
                    return "ok"  # the host is gone; something it started holds the stream
            continue
        if raw is None:
            return "ok"
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        if event.get("type") == "control_request":
            _control(session, event, user, before_answer)
            continue
        if event.get("type") == "system" and isinstance(event.get("session_id"), str):
            session.session_id = event["session_id"]
        state.feed_line(raw.decode("utf-8", "replace"))
        if state.finished:
            # One prompt, one result: the conversation ends with it.
            session.close_input()
        elif max(state.cost_usd or 0.0, spend.usd) >= budget_usd:
            return "budget"
    return "timeout"


def _control(
    session: _Session, event: dict[str, Any], user: ScriptedUser, before_answer: BeforeAnswer
) -> None:
    request = event.get("request")
    if not isinstance(request, dict) or request.get("subtype") != "can_use_tool":
        session.send(_reply(event.get("request_id"), {}))
        return
    if request.get("tool_name") == QUESTION_TOOL:
        before_answer(session.session_id)
    session.send(_reply(event.get("request_id"), permission(request, user, session.session_id)))
