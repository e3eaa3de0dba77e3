"""The one-line messages a user reads for a file-system refusal and for a manager failure,
for the causes the integration tests cannot produce here (root ignores permissions, a real
server does not send every shape of error)."""

from __future__ import annotations

import errno

import httpx2 as httpx
import openai
import pytest

from autopilot_codex.errors import os_problem
from autopilot_codex.manager.attempts import Invalid
from autopilot_codex.manager.openai_errors import (
    SERVER_TEXT_CHARS,
    describe,
    public_url,
    retry_wait,
    server_text,
)

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/responses")


def failure(
    status: int, body: object = None, text: str = "", headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    response = httpx.Response(status, headers=headers, text=text, request=REQUEST)
    kinds: dict[int, type[openai.APIStatusError]] = {
        401: openai.AuthenticationError,
        429: openai.RateLimitError,
    }
    return kinds.get(status, openai.APIStatusError)("sdk message", response=response, body=body)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EACCES, "permission denied on /s/x; nothing was changed"),
        (errno.EPERM, "chmod -R u+rwX /s/x"),
        (errno.EROFS, "read-only file system"),
        (errno.ENOTDIR, "a file stands where a folder belongs"),
        (errno.EEXIST, "a file stands where a folder belongs"),
        (errno.ENOSPC, "no space left for /s/x"),
    ],
)
def test_a_refusal_the_user_can_fix_is_named_with_its_path_and_fix(code: int, words: str) -> None:
    line = os_problem(OSError(code, "refused", "/s/x"))
    assert line is not None and words in line and "\n" not in line


def test_a_refusal_without_a_path_names_the_state_home_and_a_bug_is_not_a_refusal() -> None:
    assert "the state home" in (os_problem(OSError(errno.EACCES, "refused")) or "")
    assert os_problem(OSError(errno.EIO, "i/o error", "/s/x")) is None


def test_a_base_url_is_shown_without_credentials_query_or_fragment() -> None:
    shown = public_url("https://user:pw@host.example:8443/v1/?key=sk-x#frag")
    assert shown == "https://host.example:8443/v1"
    assert public_url("http://[::1") == "(unparseable base URL)"


def test_the_server_s_text_is_one_bounded_line_from_wherever_it_said_it() -> None:
    assert server_text(failure(500, body={"error": "model overloaded"})) == "model overloaded"
    assert server_text(failure(500, body={"error": {"message": 3}}, text="plain\n text")) == (
        "plain text"
    )
    long = server_text(failure(500, text="x " * 400))
    assert len(long) == SERVER_TEXT_CHARS and long.endswith("...")


def test_a_body_that_cannot_be_read_falls_back_to_the_sdk_s_message() -> None:
    streamed = httpx.Response(502, request=REQUEST, stream=httpx.ByteStream(b"unread"))
    error = openai.APIStatusError("bad gateway from upstream", response=streamed, body=None)
    assert server_text(error) == "bad gateway from upstream"


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (failure(500, text="response_format json_schema not supported"), False),
        (failure(503, text="try later"), True),
        (failure(403), False),
        (failure(418), False),
        (failure(409), True),
        (failure(429, headers={"retry-after": "soon"}), True),
        (failure(429, body={"code": "insufficient_quota"}), False),
        (ValueError("not an API error"), False),
    ],
)
def test_only_what_a_retry_can_help_is_retried(error: Exception, retried: bool) -> None:
    assert (retry_wait(error, 0) is not None) is retried


def test_a_retry_after_header_is_honoured_and_a_bad_one_falls_back_to_backoff() -> None:
    assert retry_wait(failure(429, headers={"retry-after-ms": "250"}), 0) == 0.25
    assert retry_wait(failure(503, headers={"retry-after": "2"}), 0) == 2.0
    wait = retry_wait(failure(429, headers={"retry-after": "soon"}), 2)
    assert wait is not None and 1.5 <= wait <= 2.0


def test_each_failure_opens_with_words_of_its_own() -> None:
    url = "http://127.0.0.1:9/v1"
    assert (
        describe(failure(401), url=url) == f"authentication failed at {url} (check OPENAI_API_KEY)"
    )
    assert describe(failure(429), url=url) == f"rate limited (429) at {url}"
    assert describe(failure(404), url=url).endswith("set AUTOPILOT_CODEX_API=chat")
    assert describe(failure(404), api="chat", url=url) == "HTTP 404: no error text"
    assert describe(Invalid("prose")) == "invalid answer after a corrective retry: prose"
    planted = "sk-proj-" + "a" * 40
    other = describe(KeyError(f"odd {planted}"))
    assert other.startswith("KeyError: ") and planted not in other
