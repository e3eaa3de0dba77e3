"""`claude -p --output-format stream-json --verbose`: a round's command line and its stream.

`assistant` events carry content blocks (text, tool_use), split over several events of one
message id, each with the message's `model` and `usage` (so the round's spend is estimated
as it goes, priced like the transcript: `estimate`); the final `result` event has `result` (the last text), `is_error` and
`total_cost_usd` and `usage` (the session's tokens by kind: input, output, cache reads and
cache writes, each counted apart).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...prices import count
from ...stream import action, join
from .prices import price_of
from .transcript import TOKEN_KINDS, message_usage

if TYPE_CHECKING:
    from ...host import Argv, Estimate
    from ...prices import Price
    from ...stream import StreamState

# What Claude Code reads to reach its model (API key, OAuth token, base URL, model names).
PREFIXES = ("ANTHROPIC_", "CLAUDE_")
# Claude Code on Bedrock or Vertex signs in with the cloud's credentials, only when told to.
CLOUD = {
    "CLAUDE_CODE_USE_BEDROCK": ("AWS_",),
    "CLAUDE_CODE_USE_VERTEX": ("GOOGLE_", "CLOUD_ML_", "GCLOUD_"),
}
# Without a permission flag `claude -p` denies Write and Bash; these two work as root too.
DEFAULT_ARGS = ("--permission-mode", "acceptEdits", "--allowedTools", "Bash")

# The API's answers that mean "later", not "wrong": a rate limit and an overload.
LIMIT_STATUSES = (429, 529)
LIMIT_TYPES = ("rate_limit_error", "overloaded_error")


class ClaudeHeadless:
    executable = "claude"

    def command(self, prompt: str, base: Argv, extra: Argv | None, wall: Argv = ()) -> list[str]:
        args = DEFAULT_ARGS if extra is None else extra
        return [*base, "-p", prompt, "--output-format", "stream-json", "--verbose", *args, *wall]

    def credentials(self, environ: Mapping[str, str]) -> tuple[set[str], tuple[str, ...]]:
        prefixes = list(PREFIXES)
        for flag, extra in CLOUD.items():
            if environ.get(flag, "").strip() not in ("", "0", "false"):
                prefixes += extra
        return set(), tuple(prefixes)

    def model_of(self, cmd: Sequence[str], environ: Mapping[str, str]) -> str:
        return ""  # the result event prices the round itself

    def estimate(self, spend: Estimate, event: dict[str, Any], own: Mapping[str, Price]) -> None:
        """An assistant message's usage, priced for its model (the user's rows first, an
        unknown model at the dearest row): the result event's total comes only at the end."""
        found = message_usage(event)
        if found is None:
            return
        mid, name, counts = found
        price, known = price_of(name, own)
        if not known:
            spend.unpriced = name or "(no model)"
        spend.add(mid or None, price.usd(*counts))

    def read(self, state: StreamState, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "assistant":
            message = event.get("message")
            if not isinstance(message, dict):
                return
            mid = str(message.get("id") or "")
            if not mid or mid != state.message_id:
                # A new message: the last message is the final one, even if it is only a
                # tool call (peers kept an earlier text and ended loops on it).
                state.message_id = mid
                state.last_message = ""
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    state.last_message = join(state.last_message, block["text"])
                elif block.get("type") == "tool_use":
                    state.last_action = action(str(block.get("name", "tool")), block.get("input"))
        elif kind == "result":
            _result(state, event)


def _result(state: StreamState, event: dict[str, Any]) -> None:
    state.finished = True
    if isinstance(event.get("result"), str) and event["result"].strip():
        state.last_message = event["result"]
    cost = event.get("total_cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        state.cost_usd = float(cost)
    if isinstance(event.get("usage"), dict):
        state.tokens = sum(count(event["usage"].get(k)) for k in TOKEN_KINDS)
    if event.get("is_error") or event.get("subtype") not in (None, "success"):
        state.error = _error_of(state, event)


def _error_of(state: StreamState, event: dict[str, Any]) -> str:
    """The failed result as one line. An API error says so in its own fields (2.1.332 on a 429:
    `subtype: success`, `is_error: true`, `api_error_status: 429`, `api_error_type:
    rate_limit_error`, the message in `result`), and exits 1 with nothing on stderr."""
    status, kind = event.get("api_error_status"), event.get("api_error_type")
    if not isinstance(status, int) and not isinstance(kind, str):
        return f"result {event.get('subtype', 'error')}"
    state.rate_limited = status in LIMIT_STATUSES or kind in LIMIT_TYPES
    said = " ".join(str(event.get("result") or "").split())[:300]
    return f"API error {status} {kind}" + (f": {said}" if said else "")


HEADLESS = ClaudeHeadless()
