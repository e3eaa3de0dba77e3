"""Reading a host's JSONL stream into a round's state: the last assistant message, the last
action, the cost. Each host's `Headless.read` knows its own events (`hosts/<name>/headless`);
this module holds the state they fill and the helpers they share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import surrogates

if TYPE_CHECKING:
    from .prices import Price

ACTION_MAX = 120


def _ignore(_state: StreamState, _event: dict[str, Any]) -> None:
    return None


@dataclass
class StreamState:
    host: str
    last_message: str = ""
    last_action: str = ""
    cost_usd: float | None = None
    tokens: int | None = None
    # The model the round runs, for a host whose stream reports tokens and no dollars
    # (`Headless.model_of`); "" when it is not named. `unpriced`: the name of a model priced
    # at the dearest row of the host's table.
    model: str = ""
    unpriced: str = ""
    finished: bool = False  # the host's final event arrived
    error: str = ""
    # The host's own error fields said the provider rate-limited or was overloaded (Claude's
    # `api_error_status` 429/529): the round is retried after a wait, never counted as a failure.
    rate_limited: bool = False
    events: int = 0
    # The id of the message being read, for hosts that split one message over events.
    message_id: str = ""
    # The host's reader of one event (`Headless.read`).
    reader: Callable[[StreamState, dict[str, Any]], None] = field(
        default=_ignore, repr=False, compare=False
    )
    # The user's own price rows (config `implementer_prices`), before the host's table.
    own_prices: Mapping[str, Price] = field(default_factory=dict, repr=False, compare=False)

    def feed_line(self, line: str) -> bool:
        """Take one line; False when it is not a JSON object (printed noise, a torn line)."""
        try:
            event = surrogates.loads(line)
        except ValueError:
            return False
        if not isinstance(event, dict):
            return False
        self.events += 1
        self.reader(self, event)
        return True


def join(old: str, new: str) -> str:
    return f"{old}\n{new}" if old else new


def action(name: str, payload: object) -> str:
    """A tool call as one short line for the view: its name and what it works on."""
    found = payload if isinstance(payload, dict) else {}
    keys = ("command", "file_path", "path", "pattern", "url")
    detail = next((found[k] for k in keys if isinstance(found.get(k), str) and found[k]), "")
    text = f"{name}: {detail}" if detail else name
    text = " ".join(text.split())
    return text if len(text) <= ACTION_MAX else text[: ACTION_MAX - 1] + "…"
