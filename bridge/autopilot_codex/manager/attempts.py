"""The attempt policy every manager backend shares: one deadline for the whole call, transient
failures retried within it, one corrective retry for an answer that could not be used, and
every attempt's usage charged before its answer is parsed (providers bill invalid answers too).

Keeping this in one place is what keeps the budget guard's worst case
(`pricing.BILLED_ATTEMPTS`) true for every backend.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from . import Outcome
from .pricing import BILLED_ATTEMPTS, Price, Usage, cost_usd
from .prompts import Prompt, corrective, redact

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T", bound="BaseModel")

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


class Backend(Protocol):
    """One way of reaching a manager model; `ask` drives it."""

    timeout_s: float
    price: Price

    def attempt(self, schema: type[T], request: Prompt, timeout: float) -> tuple[T, Usage]:
        """One request; raises `Charged` (with whatever usage was billed) when it fails."""
        ...

    def retry_wait(self, error: Exception, transient: int) -> float | None:
        """Seconds to wait before retrying `error`, or None when retrying cannot help."""
        ...

    def describe(self, error: Exception) -> str:
        """One line for the user about a failure that ends the call."""
        ...


def ask(backend: Backend, schema: type[T], instructions: str, prompt: str) -> Outcome[T]:
    deadline = time.monotonic() + backend.timeout_s
    # The last gate before the network: no credential leaves, whoever built the prompt.
    original = Prompt(redact(instructions), redact(prompt))
    request = original
    usage = Usage()
    attempts = corrections = transient = 0
    while True:
        attempts += 1
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            return _failed(backend, usage, attempts, f"no answer within {backend.timeout_s:g}s")
        try:
            value, used = backend.attempt(schema, request, remaining)
        except Charged as charged:
            usage += charged.usage
            error = charged.error
        else:
            usage += used
            return Outcome(value, cost_usd(usage, backend.price), usage, None, attempts)
        if isinstance(error, Invalid) and corrections < CORRECTIVE_ATTEMPTS:
            corrections += 1
            request = corrective(original, str(error))
            continue
        wait = backend.retry_wait(error, transient)
        if (
            wait is not None
            and transient < TRANSIENT_ATTEMPTS - 1
            and time.monotonic() + wait < deadline
        ):
            transient += 1
            time.sleep(wait)
            continue
        return _failed(backend, usage, attempts, backend.describe(error))


def _failed(backend: Backend, usage: Usage, attempts: int, error: str) -> Outcome[Any]:
    return Outcome(None, cost_usd(usage, backend.price), usage, error, attempts)
