"""Target: a hook's read of the implementer's spend is flat. One look at what the host appended
since the last look (one message) costs about the same in a 200 MB record as in a 2 KB one,
for Claude Code's transcript and for Codex's session rollout alike: within 1.5x.

Timed in-process (the reader alone, as a hook calls it), interleaved rounds, medians. Each look
appends one message to the record, then reads from the cursor the last look left. The first
look at the 200 MB record (read once, whole) is given for context.

    python bench/spend_read.py [--json FILE]
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from benchlib import Row, emit, rounds

if TYPE_CHECKING:
    from autopilot_codex.host import SpendRead, SpendReader

SINCE = "2026-01-01T00:00:00"
AT = "2026-01-01T00:00:10.000Z"
SMALL, LARGE = 2 * 1024, 200 * 1024 * 1024
LIMIT = 1.5


class Record:
    """A host's record on disk, its cursor, and how the host appends one message to it."""

    def __init__(self, path: Path, reader: SpendReader, message: Callable[[int], str]) -> None:
        # Imported once benchlib has put the bridge on the path.
        from autopilot_codex.host import SpendRead

        self.path, self.reader, self.message = path, reader, message
        self.last: SpendRead = SpendRead(0, ())
        self.count = 0

    def fill(self, size: int, filler: str) -> float:
        with self.path.open("w") as handle:
            while handle.tell() < size:
                handle.write(filler if handle.tell() + len(filler) < size else "\n")
                if handle.tell() % (1 << 20) < len(filler):
                    handle.write(self.next())
        start = time.perf_counter()
        self.last = self.reader.read(str(self.path), self.last, SINCE)
        return time.perf_counter() - start

    def next(self) -> str:
        self.count += 1
        return self.message(self.count)

    def look(self) -> float:
        with self.path.open("a") as handle:
            handle.write(self.next())
        start = time.perf_counter()
        got = self.reader.read(str(self.path), self.last, SINCE)
        elapsed = time.perf_counter() - start
        if got.usd <= 0 or got.tampered:
            raise RuntimeError(f"{self.path.name}: the look missed the appended message: {got}")
        self.last = got
        return elapsed


def claude_message(n: int) -> str:
    usage = {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": 9000}
    message = {"id": f"msg_{n}", "model": "claude-sonnet-4-5", "usage": usage}
    return json.dumps({"type": "assistant", "timestamp": AT, "message": message}) + "\n"


def codex_message(n: int) -> str:
    total = {"input_tokens": 12_000 * n, "cached_input_tokens": 6_000 * n, "output_tokens": 400 * n}
    last = {"input_tokens": 12_000, "cached_input_tokens": 6_000, "output_tokens": 400}
    info = {"total_token_usage": total, "last_token_usage": last}
    context = {"timestamp": AT, "type": "turn_context", "payload": {"model": "gpt-5.5"}}
    count = {"timestamp": AT, "type": "event_msg", "payload": {"type": "token_count", "info": info}}
    return json.dumps(context) + "\n" + json.dumps(count) + "\n"


CLAUDE_FILLER = json.dumps({"type": "user", "message": {"content": "x" * 3000}}) + "\n"
CODEX_FILLER = json.dumps({"type": "response_item", "payload": {"text": "x" * 3000}}) + "\n"


def main() -> None:
    from autopilot_codex.hosts.claude.transcript import TranscriptReader
    from autopilot_codex.hosts.codex.rollout import RolloutReader

    n = rounds(300, 40)
    rows: list[Row] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="autopilot-bench-spend-") as tmp:
        for host, reader, message, filler in (
            ("claude", TranscriptReader(), claude_message, CLAUDE_FILLER),
            ("codex", RolloutReader(), codex_message, CODEX_FILLER),
        ):
            small = Record(Path(tmp, f"{host}-small.jsonl"), reader, message)
            large = Record(Path(tmp, f"{host}-large.jsonl"), reader, message)
            small.fill(SMALL, filler)
            first = large.fill(LARGE, filler)
            samples: dict[str, list[float]] = {"small": [], "large": []}
            rng = random.Random(7)
            for _ in range(n):
                order = [("small", small), ("large", large)]
                rng.shuffle(order)
                for name, record in order:
                    samples[name].append(record.look())
            base = statistics.median(samples["small"]) * 1000
            value = statistics.median(samples["large"]) * 1000
            rows.append(
                Row(
                    "spend_read",
                    f"{host}: one look, 200 MB record",
                    value,
                    "ms",
                    "2 KB record",
                    base,
                    value / base,
                    f"<= {LIMIT:g}x",
                    value / base <= LIMIT,
                )
            )
            notes.append(f"{host}: the first look at the 200 MB record (read once, whole) took {first:.2f} s")
            Path(large.path).unlink()
    emit(rows, notes)


if __name__ == "__main__":
    main()
