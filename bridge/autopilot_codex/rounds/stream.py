"""Reading a host's JSONL stream: the last assistant message, the last action, the cost.

Claude (`claude -p --output-format stream-json --verbose`): `assistant` events carry content
blocks (text, tool_use), split over several events of one message id; the final `result` event
has `result` (the last text), `is_error` and `total_cost_usd`.
Codex (`codex exec --json`): `item.started`/`item.completed` with `agent_message`,
`command_execution`, `file_change`...; `turn.completed` with `usage`; `turn.failed`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ACTION_MAX = 120


@dataclass
class StreamState:
    host: str
    last_message: str = ""
    last_action: str = ""
    cost_usd: float | None = None
    tokens: int | None = None
    finished: bool = False  # a result / turn.completed event arrived
    error: str = ""
    events: int = 0
    _message_id: str = ""

    def feed_line(self, line: str) -> bool:
        """Take one line; False when it is not a JSON object (printed noise, a torn line)."""
        try:
            event = json.loads(line)
        except ValueError:
            return False
        if not isinstance(event, dict):
            return False
        self.events += 1
        if self.host == "codex":
            self._codex(event)
        else:
            self._claude(event)
        return True

    def _claude(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "assistant":
            message = event.get("message")
            if not isinstance(message, dict):
                return
            mid = str(message.get("id") or "")
            if not mid or mid != self._message_id:
                # A new message: the last message is the final one, even if it is only a
                # tool call (peers kept an earlier text and ended loops on it).
                self._message_id = mid
                self.last_message = ""
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    self.last_message = _join(self.last_message, block["text"])
                elif block.get("type") == "tool_use":
                    self.last_action = _action(str(block.get("name", "tool")), block.get("input"))
        elif kind == "result":
            self.finished = True
            if isinstance(event.get("result"), str) and event["result"].strip():
                self.last_message = event["result"]
            cost = event.get("total_cost_usd")
            if isinstance(cost, int | float) and not isinstance(cost, bool):
                self.cost_usd = float(cost)
            if event.get("is_error") or event.get("subtype") not in (None, "success"):
                self.error = f"result {event.get('subtype', 'error')}"

    def _codex(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), dict) else {}
        assert isinstance(item, dict)
        itype = item.get("type")
        if kind in ("item.started", "item.completed"):
            if itype == "agent_message" and kind == "item.completed":
                self.last_message = str(item.get("text", ""))
            elif itype == "command_execution":
                self.last_action = _action("shell", {"command": item.get("command", "")})
            elif itype == "file_change":
                paths = [
                    c.get("path", "") for c in item.get("changes") or [] if isinstance(c, dict)
                ]
                self.last_action = _action("edit", {"file_path": ", ".join(paths)})
            elif itype in ("mcp_tool_call", "web_search"):
                self.last_action = _action(str(itype), {"command": item.get("tool", "")})
        elif kind == "turn.completed":
            self.finished = True
            usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
            assert isinstance(usage, dict)
            counts = [v for k, v in usage.items() if k in ("input_tokens", "output_tokens")]
            self.tokens = (self.tokens or 0) + sum(v for v in counts if isinstance(v, int))
        elif kind == "turn.failed":
            error = event.get("error")
            self.error = str(error.get("message") if isinstance(error, dict) else error)


def _join(old: str, new: str) -> str:
    return f"{old}\n{new}" if old else new


def _action(name: str, payload: object) -> str:
    detail = ""
    if isinstance(payload, dict):
        for key in ("command", "file_path", "path", "pattern", "url"):
            if isinstance(payload.get(key), str) and payload[key]:
                detail = payload[key]
                break
    text = f"{name}: {detail}" if detail else name
    text = " ".join(text.split())
    return text if len(text) <= ACTION_MAX else text[: ACTION_MAX - 1] + "…"
