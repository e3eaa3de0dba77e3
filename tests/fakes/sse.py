"""The streamed form of a Responses API answer (``"stream": true``), as server-sent events.

Codex only ever streams, and it takes each output item from ``response.output_item.done`` and
the usage from ``response.completed``; the ``openai`` client's stream helper also wants the
``content_part`` events around the text deltas. Both are served from the same full response
envelope the non-streaming form returns, so a scripted reply means the same thing either way.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator

# Text deltas are cut to this many characters, so a client sees more than one delta.
DELTA_CHARS = 64


def frame(event: dict[str, object]) -> bytes:
    """One SSE frame: ``event: <type>`` and ``data: <json>``, then a blank line."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def events(response: dict[str, object]) -> Iterator[dict[str, object]]:
    """The event sequence of a stream that ends in ``response``, numbered from 0."""
    for number, event in enumerate(_events(response)):
        event["sequence_number"] = number
        yield event


def _events(response: dict[str, object]) -> Iterator[dict[str, object]]:
    started = copy.deepcopy(response)
    started.update(status="in_progress", output=[], usage=None)
    yield {"type": "response.created", "response": started}
    yield {"type": "response.in_progress", "response": started}
    output = response.get("output")
    for index, item in enumerate(output if isinstance(output, list) else []):
        if isinstance(item, dict):
            yield from _item_events(index, item)
    final = (
        "response.incomplete" if response.get("status") == "incomplete" else "response.completed"
    )
    yield {"type": final, "response": response}


def _item_events(index: int, item: dict[str, object]) -> Iterator[dict[str, object]]:
    opening = copy.deepcopy(item)
    opening["status"] = "in_progress"
    if opening.get("type") == "message":
        opening["content"] = []
    yield {"type": "response.output_item.added", "output_index": index, "item": opening}
    content = item.get("content") if item.get("type") == "message" else None
    for part_index, part in enumerate(content if isinstance(content, list) else []):
        if isinstance(part, dict):
            yield from _part_events(index, str(item.get("id", "")), part_index, part)
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def _part_events(
    index: int, item_id: str, part_index: int, part: dict[str, object]
) -> Iterator[dict[str, object]]:
    where: dict[str, object] = {
        "item_id": item_id,
        "output_index": index,
        "content_index": part_index,
    }
    empty = dict(part, text="") if part.get("type") == "output_text" else part
    yield {"type": "response.content_part.added", **where, "part": empty}
    if part.get("type") == "output_text":
        text = str(part.get("text", ""))
        for start in range(0, len(text), DELTA_CHARS):
            delta = text[start : start + DELTA_CHARS]
            yield {"type": "response.output_text.delta", **where, "delta": delta, "logprobs": []}
        yield {"type": "response.output_text.done", **where, "text": text, "logprobs": []}
    yield {"type": "response.content_part.done", **where, "part": part}
