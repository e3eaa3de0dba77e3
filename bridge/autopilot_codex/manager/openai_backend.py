"""The manager through the `openai` package: Responses API, or Chat Completions for local servers.

One attempt and its failure classes live here; the retry policy is `attempts.ask`. The SDK's own
retries are off, so one call can never outlive `timeout_s`.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from .. import credentials
from . import Outcome
from .attempts import Charged, Invalid, ask
from .openai_errors import describe, public_url, retry_wait
from .pricing import Price, Usage, price_for, unseen
from .prompts import Prompt

if TYPE_CHECKING:
    from ..config import Config

T = TypeVar("T", bound=BaseModel)


def make(model: str, config: Config) -> OpenAIManager:
    return OpenAIManager(
        model=model,
        api=config.api,
        timeout_s=config.timeout_s,
        max_output_tokens=config.max_output_tokens,
        prompt_chars=config.prompt_chars,
        base_url=config.base_url,
    )


def problem(config: Config) -> str | None:
    return api_key_problem()


# The request is our prompt and nothing else, and `max_output_tokens` caps the answer.
OVERHEAD_CHARS = 0


def output_cap(asked: int) -> int:
    return asked


def price(model: str, config: Config) -> Price:
    return price_for(model)


def api_key_problem() -> str | None:
    if not credentials.has_key():
        return (
            "OPENAI_API_KEY is not set. Store your OpenAI API key with `autopilot-codex login` "
            "(kept where the implementer cannot read it), or set OPENAI_API_KEY (for a local "
            "OpenAI-compatible server, any non-empty value plus OPENAI_BASE_URL and "
            "AUTOPILOT_CODEX_API=chat)."
        )
    return None


class OpenAIManager:
    def __init__(
        self,
        *,
        model: str,
        api: str = "responses",
        timeout_s: float = 180.0,
        max_output_tokens: int = 4000,
        price: Price | None = None,
        prompt_chars: int | None = None,
        base_url: str = "",
    ) -> None:
        # The stored login (`autopilot-codex login`) first, then the environment's key.
        stored = credentials.load()
        # The loop's own server (kept from plan time) first; an empty value is "unset".
        url = (
            base_url.strip()
            or (stored.base_url if stored else "")
            or os.environ.get("OPENAI_BASE_URL", "").strip()
            or None
        )
        self._options: dict[str, Any] = {
            "api_key": stored.api_key if stored else None,
            "organization": (stored.organization or None) if stored else None,
            "base_url": url,
            "max_retries": 0,
            "timeout": timeout_s,
        }
        self.client = openai.OpenAI(**self._options)
        self.model = model
        self.api = api
        self.timeout_s = timeout_s
        self.max_output_tokens = max_output_tokens
        self.price = price or price_for(model)
        self.prompt_chars = prompt_chars
        # Named in errors; never the key (that travels in a header, not in the URL).
        self.url = public_url(str(self.client.base_url))

    def ask(self, schema: type[T], instructions: str, prompt: str) -> Outcome[T]:
        # A client of its own for the call, closed with it: its connections are not left open
        # for the garbage collector to find in a process that goes on (a worker, a driver).
        shared = self.client
        with openai.OpenAI(**self._options) as self.client:
            try:
                return ask(self, schema, instructions, prompt, cap=self.prompt_chars)
            finally:
                self.client = shared

    def retry_wait(self, error: Exception, transient: int) -> float | None:
        return retry_wait(error, transient)

    def describe(self, error: Exception) -> str:
        return describe(error, api=self.api, url=self.url)

    def attempt(self, schema: type[T], request: Prompt, timeout: float) -> tuple[T, Usage]:
        try:
            if self.api == "chat":
                raw: Any = self.client.chat.completions.with_raw_response.parse(
                    model=self.model,
                    messages=[
                        {"role": "system", "content": request.instructions},
                        {"role": "user", "content": request.text},
                    ],
                    response_format=schema,
                    max_completion_tokens=self.max_output_tokens,
                    timeout=timeout,
                )
            else:
                raw = self.client.responses.with_raw_response.parse(
                    model=self.model,
                    instructions=request.instructions,
                    input=request.text,
                    text_format=schema,
                    max_output_tokens=self.max_output_tokens,
                    store=False,
                    timeout=timeout,
                )
        except openai.APITimeoutError as exc:
            text = request.instructions + " " + request.text
            raise Charged(unseen(text, self.max_output_tokens), exc) from exc
        except openai.OpenAIError as exc:
            raise Charged(Usage(), exc) from exc
        try:
            body = raw.http_response.json()
        except (json.JSONDecodeError, ValueError) as exc:
            raise Charged(Usage(), Invalid("the answer was not JSON")) from exc
        usage = _usage(body)
        if _cut_at_the_cap(body):
            raise Charged(usage, Invalid(self._cut_off()))
        try:
            value = _extract(raw.parse(), self.api)
        except ValidationError as exc:
            first = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
            raise Charged(
                usage, Invalid(f"the answer did not match the schema: {first['msg']}")
            ) from exc
        except Invalid as exc:
            raise Charged(usage, exc) from exc
        except openai.LengthFinishReasonError as exc:
            raise Charged(usage, Invalid(self._cut_off())) from exc
        except openai.ContentFilterFinishReasonError as exc:
            raise Charged(usage, Invalid("the answer was stopped by the content filter")) from exc
        except (TypeError, AttributeError, KeyError, ValueError) as exc:
            raise Charged(
                usage, Invalid(f"the answer had an unexpected shape ({type(exc).__name__})")
            ) from exc
        return value, usage

    def _cut_off(self) -> str:
        return f"your answer was cut off at {self.max_output_tokens} tokens; answer shorter"


def _cut_at_the_cap(body: Any) -> bool:
    """A Responses answer that ended at max_output_tokens (the SDK reports it as bad JSON)."""
    if not isinstance(body, dict) or body.get("status") != "incomplete":
        return False
    details = body.get("incomplete_details")
    return isinstance(details, dict) and details.get("reason") == "max_output_tokens"


def _extract(parsed: Any, api: str) -> Any:
    if api == "chat":
        message = parsed.choices[0].message
        if message.parsed is None:
            raise Invalid("refused: " + message.refusal if message.refusal else "empty answer")
        return message.parsed
    value = parsed.output_parsed
    if value is None:
        raise Invalid(_responses_problem(parsed))
    return value


def _responses_problem(parsed: Any) -> str:
    for item in getattr(parsed, "output", None) or []:
        for part in getattr(item, "content", None) or []:
            if getattr(part, "type", "") == "refusal":
                return "refused: " + str(getattr(part, "refusal", ""))[:200]
    status = getattr(parsed, "status", None)
    return f"no structured answer (status {status})" if status else "empty answer"


def _usage(body: Any) -> Usage:
    data = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(data, dict):
        return Usage()
    details = data.get("input_tokens_details") or data.get("prompt_tokens_details") or {}
    return Usage.reported(
        data.get("input_tokens", data.get("prompt_tokens")),
        details.get("cached_tokens") if isinstance(details, dict) else 0,
        data.get("output_tokens", data.get("completion_tokens")),
    )
