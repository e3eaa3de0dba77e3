"""How the openai backend classifies a failure: retry it or not, and the line the user reads.

The line keeps what the server said (bounded, credentials removed), because that is usually
the fix: `HTTP 500: response_format json_schema not supported`.
"""

from __future__ import annotations

import random
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from ..credentials import redact
from .attempts import Invalid

# A 5xx whose body says the request itself is wrong will fail the same way every time.
_REQUEST_AT_FAULT = re.compile(
    r"not supported|unsupported|not implemented|invalid|unknown (parameter|field|argument)|"
    r"unrecognized|json_schema|response_format",
    re.IGNORECASE,
)
_NEVER_RETRIED = (400, 401, 403, 404, 405, 413, 415, 422, 501)
SERVER_TEXT_CHARS = 300


def public_url(url: str) -> str:
    """`url` without user, password, query or fragment: safe to show."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(unparseable base URL)"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def server_text(error: openai.APIStatusError) -> str:
    """What the server said about the failure, one bounded line without credentials."""
    text = _message(error.body)
    if not text:
        try:
            text = error.response.text
        except Exception:  # a streamed or closed body: fall back to the SDK's own message
            text = str(error.message)
    line = " ".join(redact(text).split())
    return line if len(line) <= SERVER_TEXT_CHARS else line[: SERVER_TEXT_CHARS - 3] + "..."


def _message(body: Any) -> str:
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
            return message if isinstance(message, str) else ""
        if isinstance(inner, str):
            return inner
    return ""


def retry_wait(error: Exception, transient: int) -> float | None:
    """Seconds to wait before retrying, or None when retrying cannot help."""
    if isinstance(error, openai.RateLimitError):
        if getattr(error, "code", None) == "insufficient_quota":
            return None
        return _retry_after(error) or _backoff(transient)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        if status in _NEVER_RETRIED:
            return None
        if status >= 500 and _REQUEST_AT_FAULT.search(server_text(error)):
            return None
        if status in (408, 409) or status >= 500:
            return _retry_after(error) or _backoff(transient)
        return None
    if isinstance(error, openai.APIConnectionError):  # timeouts included
        return _backoff(transient)
    return None


def _retry_after(error: openai.APIStatusError) -> float | None:
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw:
            try:
                return max(0.0, float(str(raw))) * scale
            except ValueError:
                return None
    return None


def _backoff(transient: int) -> float:
    delay: float = min(0.5 * 2.0**transient, 8.0)
    return delay * (1 - 0.25 * random.random())


def describe(error: Exception, *, api: str = "responses", url: str = "") -> str:
    """One line for the user. Distinct openings per class, so a pause message can tell an
    unreachable manager ("cannot connect", "timed out") from a bad answer ("invalid answer")."""
    where = f" at {url}" if url else ""
    if isinstance(error, openai.AuthenticationError):
        return f"authentication failed{where} (check OPENAI_API_KEY)"
    if isinstance(error, openai.RateLimitError):
        if getattr(error, "code", None) == "insufficient_quota":
            return "quota exhausted (insufficient_quota)"
        return f"rate limited (429){where}"
    if isinstance(error, openai.APITimeoutError):
        return f"timed out waiting for {url or 'the API'}"
    if isinstance(error, openai.APIConnectionError):
        return f"cannot connect to the API{where}"
    if isinstance(error, openai.APIStatusError):
        line = f"HTTP {error.status_code}: {server_text(error) or 'no error text'}"
        if error.status_code == 404 and api == "responses":
            line += (
                f"; {url or 'the server'} has no /v1/responses: for a local OpenAI-compatible "
                "server set AUTOPILOT_CODEX_API=chat"
            )
        return line
    if isinstance(error, Invalid):
        return f"invalid answer after a corrective retry: {error}"
    return f"{type(error).__name__}: {redact(str(error))[:200]}"
