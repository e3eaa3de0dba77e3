"""The implementer's spend read from a Codex session rollout: its running totals counted by how
far they rose (never twice, never lowered by an edit), priced per model and token kind in
literal dollars."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from autopilot_codex.host import SpendRead
from autopilot_codex.hosts.codex import prices
from autopilot_codex.hosts.codex.rollout import RolloutReader
from autopilot_codex.prices import parse_own

SINCE = "2026-01-01T00:00:00"
AT = "2026-01-01T00:00:10.000Z"


def turn(model: str = "gpt-5.5", at: str = AT) -> str:
    record = {"timestamp": at, "type": "turn_context", "payload": {"turn_id": "t", "model": model}}
    return json.dumps(record) + "\n"


def usage(
    input: int = 0, cached: int = 0, output: int = 0, reasoning: int = 0, write: int = 0
) -> dict[str, int]:
    return {
        "input_tokens": input,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": write,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
        "total_tokens": input + output,
    }


def count(total: dict[str, int], last: dict[str, int] | None = None, at: str = AT) -> str:
    info = {"total_token_usage": total, "last_token_usage": last or total}
    record = {
        "timestamp": at,
        "type": "event_msg",
        "payload": {"type": "token_count", "info": info},
    }
    return json.dumps(record) + "\n"


def read(path: Path, last: SpendRead | None = None, own: object = None) -> SpendRead:
    return RolloutReader().read(str(path), last or SpendRead(0, ()), SINCE, own)


# A tenth of a million tokens: one request below the long-context threshold.
M = 100_000


@pytest.mark.parametrize(
    ("model", "input", "cached", "output"),
    [
        ("gpt-5.5", 5.00, 0.50, 30.00),
        ("gpt-5.3-codex", 1.75, 0.175, 14.00),
        ("gpt-5.1-codex-max", 1.25, 0.125, 10.00),
        ("gpt-5-mini", 0.25, 0.025, 2.00),
        ("gpt-6.2-sol", 2.00, 0.10, 10.00),
    ],
)
def test_each_token_kind_is_priced_at_its_literal_rate(
    tmp_path: Path, model: str, input: float, cached: float, output: float
) -> None:
    path = tmp_path / "rollout.jsonl"
    # A tenth of a million each of plain input, cached input and output (input counts the
    # cached), so a tenth of the dollars per million.
    path.write_text(turn(model) + count(usage(input=2 * M, cached=M, output=M)))
    got = read(path)
    assert got.usd == pytest.approx((input + cached + output) / 10)
    assert got.tokens == 3 * M
    assert got.unknown == ()


def test_the_table_rows_in_dollars_per_million() -> None:
    row = prices.price_of("gpt-5.5-2026-04-23")[0]
    assert (row.input, row.cache_read, row.cache_write, row.output) == (5.0, 0.5, 5.0, 30.0)
    # A cache write is billed as input by OpenAI.
    assert prices.usd(row, M, 0, M, 0) == pytest.approx(0.5)
    assert prices.price_of("gpt-50")[1] is False


def test_an_unknown_model_is_priced_at_the_dearest_row(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(turn("gpt-9-future") + count(usage(output=M)))
    got = read(path)
    assert got.usd == pytest.approx(5.0)  # gpt-6-astra's $50 per million output
    assert got.unknown == ("gpt-9-future",)


def test_a_rollout_that_names_no_model_is_priced_at_the_dearest_row(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(count(usage(input=M)))
    got = read(path)
    assert got.usd == pytest.approx(1.0)  # gpt-6-astra's $10 per million input
    assert got.unknown == ("(no model)",)


def test_the_users_own_rows_come_first(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(turn("gpt-5.5") + count(usage(input=2 * M, cached=M, output=M)))
    own = parse_own({"gpt-5.5": {"input": 1, "output": 2, "cache_read": 0.5}})
    assert read(path, own=own).usd == pytest.approx((1 + 0.5 + 2) / 10)


def test_a_request_past_the_long_context_threshold_is_billed_at_its_rate(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(turn("gpt-5.5") + count(usage(input=300_000, output=100_000)))
    # $5 × 2 per million input, $30 × 1.5 per million output.
    assert read(path).usd == pytest.approx(0.3 * 10.0 + 0.1 * 45.0)


def test_reasoning_left_out_of_the_output_count_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    apart = dict(usage(output=M, reasoning=M), total_tokens=2 * M)
    folded = usage(output=2 * M, reasoning=M)
    path.write_text(turn() + count(apart))
    assert read(path).usd == pytest.approx(6.0)
    path.write_text(turn() + count(folded))
    assert read(path).usd == pytest.approx(6.0)


def test_the_running_totals_are_counted_by_how_far_they_rose(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        turn()
        + count(usage(input=M))
        + '{"type":"event_msg","payload":{"type":"token_count","info":null}}\n'
    )
    first = read(path)
    assert first.usd == pytest.approx(0.5)
    assert first.totals == (M, 0, 0, 0) and first.model == "gpt-5.5"
    with path.open("a") as handle:
        # The same totals written twice count once; then they rise by a million output tokens.
        handle.write(count(usage(input=M)) + count(usage(input=M, output=M), usage(output=M)))
    second = read(path, first)
    assert second.usd == pytest.approx(3.0)
    assert second.tokens == M
    assert read(path, second).usd == 0.0


def test_the_model_named_in_an_earlier_look_prices_a_later_one(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(turn("gpt-5-mini") + count(usage(output=M)))
    first = read(path)
    with path.open("a") as handle:
        handle.write(count(usage(output=2 * M), usage(output=M)))
    assert read(path, first).usd == pytest.approx(0.2)


def test_totals_before_the_loop_started_are_where_it_starts_counting(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        turn(at="2025-12-31T23:00:00.000Z")
        + count(usage(output=M), at="2025-12-31T23:00:01.000Z")
        + count(usage(output=M + 10), usage(output=10))
    )
    assert read(path).tokens == 10


def test_totals_counted_afresh_charge_that_responses_own_usage(tmp_path: Path) -> None:
    """A session resumed by a process that counts from zero: its first totals are lower than
    the marks, so the response's own usage counts, and the marks follow the host's."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(turn() + count(usage(output=M)))
    first = read(path)
    with path.open("a") as handle:
        handle.write(count(usage(output=10)) + count(usage(output=30), usage(output=20)))
    assert read(path, first).tokens == 30


# -- tampering: the implementer edits the rollout as the host's user --------------------------


def test_totals_edited_lower_hide_nothing_for_long(tmp_path: Path) -> None:
    """A line forged with low totals counts little, but the next line Codex writes carries its
    true totals, and the rise from the forged marks counts what was hidden."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(turn() + count(usage(output=M)))
    first = read(path)
    with path.open("a") as handle:
        handle.write(count(usage(output=0), usage(output=0)))  # forged, hiding a response
    forged = read(path, first)
    assert forged.usd == 0.0
    with path.open("a") as handle:
        handle.write(count(usage(output=3 * M), usage(output=M)))  # Codex's next, true line
    later = read(path, forged)
    assert first.usd + forged.usd + later.usd >= 3 * 3.0


def test_a_rollout_cut_short_is_read_again_without_counting_twice(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    filler = json.dumps({"type": "response_item", "payload": {"text": "x" * 500}}) + "\n"
    path.write_text(
        turn() + count(usage(output=M)) + count(usage(output=2 * M), usage(output=M)) + filler
    )
    first = read(path)
    assert first.usd == pytest.approx(6.0)
    # Cut back to its first two lines, then Codex appends its next response.
    path.write_text(turn() + count(usage(output=M)) + count(usage(output=3 * M), usage(output=M)))
    again = read(path, first)
    assert again.tampered.startswith("cut short")
    assert again.usd == pytest.approx(3.0)  # only the new tokens
    assert again.totals == (0, 0, 0, 3 * M)


def test_a_rollout_rewritten_before_the_offset_is_noticed_and_nothing_taken_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rollout.jsonl"
    text = turn() + count(usage(output=M))
    path.write_text(text)
    first = read(path)
    # The same length, its totals lowered, then a new line: the spend read stays counted.
    path.write_text(text.replace('"output_tokens": 100000', '"output_tokens": 1     '))
    with path.open("a") as handle:
        handle.write(count(usage(output=2 * M), usage(output=M)))
    again = read(path, first)
    assert again.tampered == "rewritten before the point already read"
    assert again.usd == pytest.approx(3.0)


def test_a_link_or_a_missing_rollout_reads_nothing(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text(turn() + count(usage(output=M)))
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert read(link).usd == 0.0
    kept = SpendRead(7, (), totals=(1, 0, 0, 2), model="gpt-5.5")
    assert read(tmp_path / "absent.jsonl", kept) == kept


# -- subagents: threads of their own, rollouts of their own ----------------------------------


PARENT = "01a2340f-d511-7211-96ad-d65ae31fcda6"
CHILD = "01a2340f-d5c7-7ad0-a335-cdfa18fb2e02"
GRANDCHILD = "01a2340f-0000-7ad0-a335-cdfa18fb2e03"
STRANGER = "01a2340f-ffff-7ad0-a335-cdfa18fb2e04"


def meta(thread: str, parent: str | None, inherited: int | None = None) -> str:
    payload = {
        "id": thread,
        "parent_thread_id": parent,
        "subagent_history_start_ordinal": inherited,
    }
    return (
        json.dumps({"timestamp": AT, "ordinal": 0, "type": "session_meta", "payload": payload})
        + "\n"
    )


def rollout(folder: Path, thread: str, text: str) -> Path:
    path = folder / f"rollout-2026-01-01T00-00-10-{thread}.jsonl"
    path.write_text(text)
    return path


def test_a_sessions_subagents_and_theirs_are_found_beside_it(tmp_path: Path) -> None:
    parent = rollout(tmp_path, PARENT, meta(PARENT, None))
    child = rollout(tmp_path, CHILD, meta(CHILD, PARENT))
    grandchild = rollout(tmp_path, GRANDCHILD, meta(GRANDCHILD, CHILD))
    rollout(tmp_path, STRANGER, meta(STRANGER, None))
    (tmp_path / f"rollout-2026-01-01T00-00-11-{STRANGER[:-1]}5.jsonl").symlink_to(child)
    reader = RolloutReader()
    assert reader.related(str(parent), 0.0) == sorted([str(child), str(grandchild)])
    # A rollout not written to since the loop began holds none of its spend.
    assert reader.related(str(parent), child.stat().st_mtime + 3600) == []


def dated(sessions: Path, day: datetime.date) -> Path:
    folder = sessions / f"{day.year:04d}" / f"{day.month:02d}" / f"{day.day:02d}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_subagent_started_on_a_later_day_is_found_in_that_day_s_folder(tmp_path: Path) -> None:
    today = datetime.datetime.now(datetime.timezone.utc).date()
    yesterday, before = today - datetime.timedelta(days=1), today - datetime.timedelta(days=2)
    parent = rollout(dated(tmp_path, yesterday), PARENT, meta(PARENT, None))
    child = rollout(dated(tmp_path, today), CHILD, meta(CHILD, PARENT))
    grandchild = rollout(dated(tmp_path, today), GRANDCHILD, meta(GRANDCHILD, CHILD))
    # A day before the parent's holds none of its subagents, and is not listed.
    rollout(dated(tmp_path, before), STRANGER, meta(STRANGER, PARENT))
    assert RolloutReader().related(str(parent), 0.0) == sorted([str(child), str(grandchild)])


def test_the_parents_history_a_subagents_rollout_starts_with_is_not_counted(tmp_path: Path) -> None:
    copied = json.loads(count(usage(output=M)))
    copied["ordinal"] = 3
    own = json.loads(count(usage(output=10)))
    own["ordinal"] = 9
    path = rollout(
        tmp_path,
        CHILD,
        meta(CHILD, PARENT, inherited=5)
        + turn()
        + json.dumps(copied)
        + "\n"
        + json.dumps(own)
        + "\n",
    )
    assert read(path).tokens == 10


def test_a_turn_context_forged_with_a_cheaper_model_does_not_cheapen_the_spend(
    tmp_path: Path,
) -> None:
    """The attack: the implementer appends a `turn_context` naming gpt-5-mini ($2 per million
    output) so that its gpt-5.5 responses ($30) that follow are priced at a fifteenth. The model
    the host's own hook payload names (which the implementer cannot write) is the floor."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(turn("gpt-5.5") + turn("gpt-5-mini") + count(usage(output=M)))
    got = RolloutReader().read(str(path), SpendRead(0, ()), SINCE, None, "gpt-5.5")
    assert got.usd == pytest.approx(3.0)
    # A payload naming no model, or a cheaper one, takes nothing from the record's own.
    path.write_text(turn("gpt-5.5") + count(usage(output=M)))
    assert RolloutReader().read(str(path), SpendRead(0, ()), SINCE, None, "").usd == pytest.approx(
        3.0
    )
    assert RolloutReader().read(
        str(path), SpendRead(0, ()), SINCE, None, "gpt-5-mini"
    ).usd == pytest.approx(3.0)
