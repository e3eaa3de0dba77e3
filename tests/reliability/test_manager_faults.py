"""Every way the manager can fail, through the Stop and PostToolUse hooks.

Infrastructure trouble is never a verdict: the loop retries what can be retried within its
deadline, otherwise pauses and lets the host go on. It never blocks because the manager
failed, it charges every attempt the API billed, and the hook answers within the deadline.
"""

from __future__ import annotations

import dataclasses
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.manager.pricing import Usage, cost_usd, price_for
from tests.conftest import edit_payload, payload, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import Hook, answer_of, events_of, state_of
from tests.reviews import wait_reviews

# Seconds a manager call may take in total, retries included, where the fault is that the
# deadline passes: the server never answers sooner, so a loaded machine cannot change the outcome.
TIMEOUT_S = 1.0
# Every other fault ends when the server answers; its deadline must never bind, or a slow first
# attempt (a loaded machine importing the client) leaves no room for the retry under test.
UNBOUND_S = 120.0


@dataclass(frozen=True)
class Fault:
    """Replies for one failure class, what the loop must do, and what the API billed."""

    replies: tuple[Reply | str, ...]
    recovers: bool  # True: a retry gets a valid answer; False: the loop pauses
    billed: int  # attempts whose tokens the API counted
    error: str = ""  # a fragment of the pause reason
    min_requests: int = 1
    max_requests: int = 3
    refused: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    deadline_s: float = UNBOUND_S
    # The API may have billed each attempt sent without the bridge seeing what it counted (a
    # reply that came too late): each is charged at its ceiling, never at nothing.
    unseen: bool = False


# Stands for a valid answer in the schema the hook asks for (a verdict or a review).
VALID = "valid"


FAULTS: dict[str, Fault] = {
    "429": Fault((Reply(status=429),) * 3, False, 0, "rate limited", min_requests=2),
    "429-then-ok": Fault((Reply(status=429), VALID), True, 1, min_requests=2, max_requests=2),
    "429-retry-after-honoured": Fault(
        (Reply(status=429, headers={"retry-after-ms": "200"}), VALID),
        True,
        1,
        min_requests=2,
        max_requests=2,
    ),
    "429-retry-after-too-long": Fault(
        (Reply(status=429, headers={"retry-after": "300"}),), False, 0, "rate limited", 1, 1
    ),
    "insufficient-quota": Fault(
        (Reply(status=429, error_code="insufficient_quota"),) * 3, False, 0, "quota", 1, 1
    ),
    "500": Fault((Reply(status=500),) * 3, False, 0, "HTTP 500", min_requests=2),
    "500-then-ok": Fault((Reply(status=500), VALID), True, 1, min_requests=2, max_requests=2),
    "timeout": Fault((Reply(delay=30),) * 3, False, 0, "", 1, 2, deadline_s=TIMEOUT_S, unseen=True),
    "connection-refused": Fault((), False, 0, "cannot connect", 0, 0, refused=True),
    "malformed-json": Fault(
        (Reply(raw=b'{"id": "resp_1", "output": ['),) * 2, False, 0, "not JSON", 2, 2
    ),
    "empty-object": Fault((Reply(raw=b"{}"),) * 2, False, 0, "invalid answer", 2, 2),
    "prose": Fault((Reply(text="Looks fine to me, carry on."),) * 2, False, 2, "schema", 2, 2),
    "schema-mismatch": Fault(
        (Reply(body={"decision": "maybe", "reason": 3}),) * 2, False, 2, "schema", 2, 2
    ),
    "refusal": Fault((Reply(refusal="I can't help with that."),) * 2, False, 2, "refused", 2, 2),
    "truncated": Fault(
        (Reply(text='{"decision": "contin', incomplete=True),) * 2, False, 2, "cut off at", 2, 2
    ),
    "invalid-then-ok": Fault((Reply(text="prose, not JSON"), VALID), True, 2, "", 2, 2),
}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scripted(reply: Reply | str, body: dict[str, Any]) -> Reply:
    if isinstance(reply, str):
        return Reply(body=body)
    if reply.delay:
        return dataclasses.replace(reply, body=body)  # valid, but too late
    return reply


@pytest.mark.parametrize("hook_event", ["Stop", "PostToolUse"])
@pytest.mark.parametrize("name", list(FAULTS))
def test_manager_fault_pauses_or_recovers_and_never_blocks(
    planned: Path,
    manager: FakeOpenAI,
    hook: Hook,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    hook_event: str,
) -> None:
    fault = FAULTS[name]
    monkeypatch.setenv("AUTOPILOT_CODEX_TIMEOUT_S", str(fault.deadline_s))
    schema, body = (
        ("Verdict", verdict_body("continue")) if hook_event == "Stop" else ("Review", review_body())
    )
    manager.enqueue(*[scripted(r, body) for r in fault.replies], schema=schema)
    if fault.refused:
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    if hook_event == "PostToolUse":
        (planned / "file1.txt").write_text("one\n")  # a diff for the manager to review
        data = edit_payload(planned)
    else:
        data = payload("Stop", planned)
    before = state_of(planned)

    result = hook(hook_event, data)
    if hook_event == "PostToolUse":
        # The edit's hook answers at once; the review is made by a background worker.
        assert answer_of(result) == {}
        wait_reviews(planned)

    assert result.code == 0
    assert "internal error" not in result.stderr, result.stderr
    answer = answer_of(result)
    after = state_of(planned)
    requests = manager.requests_for(schema=schema)
    assert fault.min_requests <= len(requests) <= fault.max_requests, len(requests)
    # A late reply is a valid answer (`scripted`): had the call waited for it instead of ending
    # at its deadline, the loop would have recovered, and the checks below say it did not.
    attempt = cost_usd(Usage(1000, 0, 200), price_for(after["autopilot"]["model"]))
    if fault.unseen:
        # At least what the API could have billed for every attempt it was sent.
        assert after["budget_used_usd"] >= before["budget_used_usd"] + len(requests) * attempt
    else:
        assert after["budget_used_usd"] == pytest.approx(
            before["budget_used_usd"] + fault.billed * attempt
        )

    if fault.recovers:
        assert after["status"] == "running"
        if hook_event == "Stop":
            assert answer["decision"] == "block"  # the verdict, not the failure, decided
            assert after["iteration"] == before["iteration"] + 1
        else:
            assert answer == {}
            assert after["autopilot"]["last_review"]["decision"] == "approve"
        return
    if hook_event == "PostToolUse":
        # Trouble in the background is not a verdict on anything: the loop runs on and the
        # Stop reviews the diff again (tests/integration/test_hooks.py).
        assert (after["status"], after["autopilot"]["last_review"]) == ("running", None)
        failed = [e for e in events_of(planned) if e["event"] == "review.unavailable.background"]
        assert fault.error in failed[-1]["error"], failed
        return

    assert "decision" not in answer, answer
    assert "paused" in answer["systemMessage"]
    assert after["status"] == "paused"
    assert after["stop_reason"].startswith("manager unavailable"), after["stop_reason"]
    assert fault.error in after["stop_reason"], after["stop_reason"]
    # Paused means quiet: the next Stop neither blocks nor calls the manager.
    calls = len(manager.requests)
    assert hook("Stop", payload("Stop", planned)).stdout == ""
    assert len(manager.requests) == calls
