"""The implementer's spend read from a Claude Code transcript: incrementally, whole lines
only, each message once, priced per model and token kind in literal dollars."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from autopilot_codex.host import SpendRead
from autopilot_codex.hosts import spendfile
from autopilot_codex.hosts.claude import prices
from autopilot_codex.hosts.claude.transcript import TranscriptReader


def line(
    message_id: str,
    model: str = "claude-sonnet-4-5",
    *,
    input: int = 0,
    output: int = 0,
    cache_read: int = 0,
    cache_write: int = 0,
    at: str = "2026-01-01T00:00:10.000Z",
) -> str:
    return (
        json.dumps(
            {
                "type": "assistant",
                "timestamp": at,
                "message": {
                    "id": message_id,
                    "model": model,
                    "usage": {
                        "input_tokens": input,
                        "output_tokens": output,
                        "cache_read_input_tokens": cache_read,
                        "cache_creation_input_tokens": cache_write,
                    },
                },
            }
        )
        + "\n"
    )


SINCE = "2026-01-01T00:00:00+00:00"


def read(path: Path, last: SpendRead | None = None) -> SpendRead:
    return TranscriptReader().read(str(path), last or SpendRead(0, ()), SINCE)


def test_each_token_kind_is_priced_at_its_literal_rate(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    # Sonnet 4: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens.
    path.write_text(
        line("m1", input=1_000_000)
        + line("m2", output=1_000_000)
        + line("m3", cache_read=1_000_000)
        + line("m4", cache_write=1_000_000)
    )
    got = read(path)
    assert got.usd == pytest.approx(3.0 + 15.0 + 0.30 + 3.75)
    assert got.tokens == 4_000_000
    assert got.unknown == ()


def test_opus_and_haiku_rows() -> None:
    assert prices.price_of("claude-opus-4-1-20250805")[0].output == 75.0
    assert prices.price_of("claude-opus-4-5-20251101")[0].output == 25.0
    assert prices.price_of("claude-haiku-4-5")[0].input == 1.0


def test_an_unknown_model_is_priced_at_the_dearest_row(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(line("m1", "claude-future-9", output=1_000_000))
    got = read(path)
    assert got.usd == pytest.approx(75.0)
    assert got.unknown == ("claude-future-9",)


def test_the_users_own_rows_come_first(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(line("m1", "claude-sonnet-4-5", input=1_000_000, cache_read=1_000_000))
    own = prices.parse_own({"claude-sonnet": {"input": 2, "output": 10}})
    got = TranscriptReader().read(str(path), SpendRead(0, ()), SINCE, own)
    assert got.usd == pytest.approx(2.0 + 0.2)
    with pytest.raises(ValueError):
        prices.parse_own({"claude-sonnet": {"input": "cheap", "output": 1}})


def test_a_message_written_on_several_lines_counts_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(line("m1", output=1_000_000) * 3)
    assert read(path).usd == pytest.approx(15.0)


def test_a_duplicate_across_two_reads_counts_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(line("m1", output=1_000_000))
    first = read(path)
    with path.open("a") as handle:
        handle.write(line("m1", output=1_000_000) + line("m2", output=1_000_000))
    second = read(path, first)
    assert (first.usd, second.usd) == pytest.approx((15.0, 15.0))


def test_the_offset_is_kept_and_a_partial_last_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    whole = line("m1", output=1_000_000)
    partial = line("m2", output=1_000_000)
    path.write_text(whole + partial[:20])
    first = read(path)
    assert first.offset == len(whole.encode())
    assert first.usd == pytest.approx(15.0)
    with path.open("a") as handle:
        handle.write(partial[20:])
    second = read(path, first)
    assert second.offset == len((whole + partial).encode())
    assert second.usd == pytest.approx(15.0)
    again = read(path, second)
    assert (again.usd, again.offset) == (0.0, second.offset)


def test_messages_before_the_loop_started_are_not_its_spend(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        line("old", output=1_000_000, at="2025-12-31T23:59:59.000Z") + line("new", output=10)
    )
    assert read(path).tokens == 10


def test_other_lines_and_garbage_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"type":"user","message":{"content":"x"}}\nnot json "usage"\n'
        '{"type":"assistant","message":{"usage":{"output_tokens":-5,"input_tokens":true}}}\n'
        + line("m1", input=10)
    )
    got = read(path)
    assert got.tokens == 10


def test_a_missing_file_or_a_fifo_reads_nothing(tmp_path: Path) -> None:
    assert read(tmp_path / "absent.jsonl", SpendRead(7, ())).offset == 7
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read(fifo).usd == 0.0


def test_a_large_transcript_is_read_once_then_only_what_was_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.jsonl"
    filler = json.dumps({"type": "user", "message": {"content": "x" * 4000}}) + "\n"
    block = filler * 256 + line("m0", output=100)
    with path.open("w") as handle:
        while handle.tell() < 50 * 1024 * 1024:
            handle.write(block)
    size = path.stat().st_size
    first = read(path)
    assert first.offset == size
    appended = line("m1", output=1_000_000)
    with path.open("a") as handle:
        handle.write(appended)
    # Count the bytes the second look reads: the appended line, and the few kilobytes of the
    # start and the end already read whose digest says the transcript was not rewritten.
    read_bytes: list[int] = []
    real_fdopen = os.fdopen

    class Counted(io.BufferedReader):
        def read(self, n: int | None = -1) -> bytes:
            data = super().read(n)
            read_bytes.append(len(data))
            return data

    def counting_fdopen(fd: int, mode: str) -> io.BufferedReader:
        assert mode == "rb"
        return Counted(real_fdopen(fd, "rb", buffering=0))

    monkeypatch.setattr(os, "fdopen", counting_fdopen)
    second = read(path, first)
    assert sum(read_bytes) == len(appended.encode()) + 4 * spendfile.DIGEST_SPAN
    assert second.tampered == ""
    assert second.usd == pytest.approx(15.0)
    assert second.offset == size + len(appended.encode())


def test_a_transcript_cut_short_is_read_again_from_its_start(tmp_path: Path) -> None:
    """Rewriting the record to hide spend already read cannot lower the meter: a file shorter
    than the offset is read from its start, so its spend counts again (never less)."""
    path = tmp_path / "t.jsonl"
    path.write_text(line("m1", output=1_000_000) + line("m2", output=1_000_000))
    first = read(path)
    path.write_text(line("m3", output=1_000_000))
    again = read(path, first)
    assert (first.usd, again.usd) == pytest.approx((30.0, 15.0))
    assert again.tampered.startswith("cut short")


def test_a_usage_that_is_not_an_object_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"type":"assistant","message":{"id":"x","usage":5}}\n'
        '{"type":"assistant","message":"text","usage":{"output_tokens":9}}\n' + line("m1", input=10)
    )
    assert read(path).tokens == 10


def test_the_last_message_ids_are_remembered(tmp_path: Path) -> None:
    # The state keeps these between reads; older ones are never written next to a new line.
    from autopilot_codex.hosts.claude.transcript import SEEN_KEPT

    path = tmp_path / "t.jsonl"
    path.write_text("".join(line(f"m{n}", input=1) for n in range(33)))
    got = read(path)
    assert got.seen == tuple(f"m{n}" for n in range(33 - SEEN_KEPT, 33))


# -- subagents: a record of their own beside the session's --------------------------------------


def test_a_sessions_subagent_records_are_the_agent_files_in_its_subagents_folder(
    tmp_path: Path,
) -> None:
    session = tmp_path / "sess-1.jsonl"
    session.write_text("")
    folder = tmp_path / "sess-1" / "subagents"
    folder.mkdir(parents=True)
    for name in (
        "agent-b.jsonl",
        "agent-a.jsonl",
        "agent-c.txt",
        "notes.jsonl",
        "agent-d.jsonl.bak",
    ):
        (folder / name).write_text("")
    reader = TranscriptReader()
    assert reader.related(str(session), 0.0) == [
        f"{folder}/agent-a.jsonl",
        f"{folder}/agent-b.jsonl",
    ]
    # No subagents folder, or a record that is not a session's: none.
    assert reader.related(str(tmp_path / "other.jsonl"), 0.0) == []
    assert reader.related(str(tmp_path / "sess-1"), 0.0) == []


def test_at_most_4096_subagent_records_are_read_per_hook(tmp_path: Path) -> None:
    session = tmp_path / "sess-1.jsonl"
    folder = tmp_path / "sess-1" / "subagents"
    folder.mkdir(parents=True)
    for n in range(4097):
        (folder / f"agent-{n:05d}.jsonl").touch()
    related = TranscriptReader().related(str(session), 0.0)
    assert len(related) == 4096 and related[-1].endswith("agent-04095.jsonl")


def priced_line(
    message_id: str,
    model: str,
    cost: float,
    *,
    input: int = 0,
    output: int = 0,
    cache_write: int = 0,
) -> str:
    """An assistant line as Claude Code writes one it priced itself: `costUSD` beside the
    message, at the line's top level."""
    record = json.loads(
        line(message_id, model, input=input, output=output, cache_write=cache_write)
    )
    record["costUSD"] = cost
    return json.dumps(record) + "\n"


def test_the_hosts_own_cost_is_taken_as_it_is_not_the_table(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    # Claude Code's default model said $0.42; an unknown row's price would say far more.
    path.write_text(
        priced_line("m1", "claude-opus-5-5", 0.42, input=20_000, output=12_000, cache_write=8_000)
        + priced_line("m1", "claude-opus-5-5", 0.42, input=20_000, output=12_000, cache_write=8_000)
    )
    got = read(path)
    assert got.usd == pytest.approx(0.42)  # one message, written on two lines, counted once
    assert got.tokens == 40_000 and got.unknown == ()


def test_a_line_without_the_hosts_cost_is_priced_by_the_table(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        priced_line("m1", "claude-sonnet-4-5", 0.10, output=1000)
        + line("m2", "claude-opus-5-5", output=1_000_000)
        + priced_line("m3", "claude-sonnet-4-5", -1, output=1_000_000)  # nonsense: the table
    )
    got = read(path)
    # $0.10 as said, then Claude Code's default model at its own row ($20 out), then $15.
    assert got.usd == pytest.approx(0.10 + 20.0 + 15.0)
    assert got.unknown == ()


def test_the_users_own_row_still_comes_before_the_hosts_cost(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(priced_line("m1", "claude-opus-5-5", 0.42, output=1000))
    free = {"": prices.Price(0, 0, 0, 0)}
    got = TranscriptReader().read(str(path), SpendRead(0, ()), SINCE, free)
    assert got.usd == 0.0 and got.tokens == 1000


def test_claude_codes_default_model_is_in_the_table() -> None:
    price, known = prices.price_of("claude-opus-5-5")
    assert known and (price.input, price.output) == (4.0, 20.0)


def compaction(before: int, after: int, at: str = "2026-01-01T00:00:20.000Z") -> str:
    metadata = {"trigger": "auto", "preTokens": before, "postTokens": after}
    record = {"type": "system", "subtype": "compact_boundary", "timestamp": at}
    return json.dumps({**record, "compactMetadata": metadata}) + "\n"


def test_a_compaction_after_an_unknown_model_is_priced_dearest_and_named(
    tmp_path: Path,
) -> None:
    """Its call's model is the one the record last named; unknown, it is said so."""
    path = tmp_path / "t.jsonl"
    path.write_text(line("m1", "claude-next-9", input=10) + compaction(1_000_000, 0))
    got = read(path)
    assert got.unknown == ("claude-next-9",)
    assert got.usd == pytest.approx(prices.DEAREST.usd(1_000_010, 0, 0, 0))


def test_a_compaction_with_no_model_named_yet_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(compaction(1_000, 0))
    assert read(path).unknown == ("(no model)",)


def test_a_line_naming_a_compaction_that_is_no_json_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"subtype": "compact_boundary", "preTokens": 5\n' + compaction(1_000, 0, "x"))
    assert read(path).tokens == 1_000
