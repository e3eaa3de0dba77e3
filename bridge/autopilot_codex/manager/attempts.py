"""The attempt policy every manager backend shares: one deadline for the whole call, transient
failures retried within it, one corrective retry for an answer that could not be used, and
every attempt's usage charged before its answer is parsed (providers bill invalid answers too).

Keeping this in one place is what keeps the budget guard's worst case
(`pricing.BILLED_ATTEMPTS`) true for every backend.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..credentials import redact
from . import Outcome
from .answers import meaning
from .pricing import BILLED_ATTEMPTS, Price, Usage, cost_usd
from .prompts import Prompt, corrective

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T", bound="BaseModel")

# The wait between transient attempts; a name of its own so a test can record the waits.
sleep = time.sleep

# Transient failures retried within the deadline; an invalid answer gets one corrective retry.
TRANSIENT_ATTEMPTS = 3
CORRECTIVE_ATTEMPTS = BILLED_ATTEMPTS - 1


class Invalid(Exception):
    """The manager answered, but not with a usable object."""


class Charged(Exception):
    """An attempt failed after the provider counted its tokens."""

    def __init__(self, usage: Usage, error: Exception) -> None:
        super().__init__(str(error))
        self.usage = usage
        self.error = error


class Transport(Protocol):
    """One way of reaching a manager model; `ask` drives it."""

    timeout_s: float
    price: Price

    def attempt(self, schema: type[T], request: Prompt, timeout: float) -> tuple[T, Usage]:
        """One request; raises `Charged` (with whatever usage was billed) when it fails."""

    def retry_wait(self, error: Exception, transient: int) -> float | None:
        """Seconds to wait before retrying `error`, or None when retrying cannot help."""

    def describe(self, error: Exception) -> str:
        """One line for the user about a failure that ends the call."""


def ask(
    backend: Transport, schema: type[T], instructions: str, prompt: str, *, cap: int | None = None
) -> Outcome[T]:
    """Drive `backend` to one usable answer. `cap` bounds a corrective retry's prompt (the
    configured prompt_chars); without it the retry note is added and nothing is cut."""
    deadline = time.monotonic() + backend.timeout_s
    # The last gate before the network: no credential leaves, whoever built the prompt.
    original = Prompt(redact(instructions), redact(prompt))
    request = original
    usage = Usage()
    cost = 0.0
    attempts = corrections = transient = 0
    error: Exception | None = None
    while True:
        attempts += 1
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            late = f"no answer within {backend.timeout_s:g}s"
            if error is not None:  # what the last attempt ran into: where, and why
                late += f" (last: {backend.describe(error)})"
            # This attempt was never made.
            return Outcome(None, cost, usage, late, attempts - 1, corrections)
        try:
            value, used = backend.attempt(schema, request, remaining)
            # Shape is the backend's job; meaning is checked here, alike for every backend.
            value, problem = meaning(value)
            if problem:
                raise Charged(used, Invalid(problem))
        except Charged as charged:
            used, error = charged.usage, charged.error
        else:
            error = None
        # Each request is priced on its own: the long-context rate is per request.
        usage += used
        cost += cost_usd(used, backend.price)
        if error is None:
            return Outcome(value, cost, usage, None, attempts, corrections)
        if isinstance(error, Invalid) and corrections < CORRECTIVE_ATTEMPTS:
            corrections += 1
            request = corrective(original, str(error), cap)
            continue
        wait = backend.retry_wait(error, transient)
        if (
            wait is not None
            and transient < TRANSIENT_ATTEMPTS - 1
            and time.monotonic() + wait < deadline
        ):
            transient += 1
            sleep(wait)
            continue
        return Outcome(None, cost, usage, backend.describe(error), attempts, corrections)
