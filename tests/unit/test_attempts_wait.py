"""A transient failure is retried after the wait the backend asks for, inside the deadline; a
failure retrying cannot help is not waited for. The waits are recorded, never slept."""

from __future__ import annotations

from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from autopilot_codex.manager import attempts
from autopilot_codex.manager.attempts import Charged
from autopilot_codex.manager.pricing import Price, Usage
from autopilot_codex.manager.prompts import Prompt
from autopilot_codex.manager.schemas import Verdict
from tests.conftest import verdict_body

T = TypeVar("T", bound=BaseModel)


class Busy(Exception):
    """A failure the scripted backend says is worth a retry after `wait` seconds."""


class Scripted:
    """A backend whose attempts fail as scripted, then answer."""

    price = Price(2.0, 0.1, 10.0)

    def __init__(self, failures: int, wait: float | None, timeout_s: float = 60.0) -> None:
        self.failures = failures
        self.wait = wait
        self.timeout_s = timeout_s
        self.made = 0
        self.asked: list[int] = []

    def attempt(self, schema: type[T], request: Prompt, timeout: float) -> tuple[T, Usage]:
        self.made += 1
        if self.made <= self.failures:
            raise Charged(Usage(), Busy("busy"))
        return schema.model_validate(verdict_body("continue")), Usage(10, 0, 2)

    def retry_wait(self, error: Exception, transient: int) -> float | None:
        self.asked.append(transient)
        return self.wait

    def describe(self, error: Exception) -> str:
        return str(error)


@pytest.fixture
def waited(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []
    monkeypatch.setattr(attempts, "sleep", waits.append)
    return waits


def ask(backend: Any) -> Any:
    return attempts.ask(backend, Verdict, "instructions", "prompt")


def test_a_retry_waits_what_the_backend_asks(waited: list[float]) -> None:
    backend = Scripted(failures=2, wait=0.75)
    outcome = ask(backend)
    assert outcome.value is not None and outcome.error is None
    assert (backend.made, waited, backend.asked) == (3, [0.75, 0.75], [0, 1])


def test_retries_stop_after_the_transient_attempts(waited: list[float]) -> None:
    backend = Scripted(failures=5, wait=0.5)
    outcome = ask(backend)
    assert outcome.value is None and outcome.error == "busy"
    assert backend.made == attempts.TRANSIENT_ATTEMPTS and len(waited) == 2


def test_a_failure_retrying_cannot_help_is_not_waited_for(waited: list[float]) -> None:
    backend = Scripted(failures=1, wait=None)
    outcome = ask(backend)
    assert (outcome.value, outcome.error, backend.made, waited) == (None, "busy", 1, [])


def test_a_wait_past_the_deadline_is_not_waited(waited: list[float]) -> None:
    backend = Scripted(failures=1, wait=120.0, timeout_s=60.0)
    outcome = ask(backend)
    assert (outcome.value, backend.made, waited) == (None, 1, [])


class Clock:
    """time.monotonic for `attempts`, moved on by the backend's attempts."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class SlowAndWrong(Scripted):
    """Each attempt takes longer than the whole timeout and answers something unusable."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(failures=0, wait=None)
        self.clock = clock

    def attempt(self, schema: type[T], request: Prompt, timeout: float) -> tuple[T, Usage]:
        self.made += 1
        self.clock.now += 61.0
        raise Charged(Usage(), attempts.Invalid("the verdict had no reason"))


def test_a_call_out_of_time_says_what_its_last_attempt_ran_into(
    waited: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(attempts, "time", clock)
    backend = SlowAndWrong(clock)
    outcome = ask(backend)
    # One attempt made, one corrective retry due but never made: the deadline had passed.
    assert outcome.value is None and backend.made == 1
    assert (outcome.attempts, outcome.corrections) == (1, 1)
    assert outcome.error == "no answer within 60s (last: the verdict had no reason)"
