"""The sealed ledger at its edges: a missing file, a torn last line, a rewrite at the anchor,
and the reads that must never fail on what they find."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.ledger import Anchor, append, audit, end, newest, verify

KEY = b"k" * 32


def ledger(tmp_path: Path, *records: dict[str, object]) -> Path:
    path = tmp_path / "events.jsonl"
    for record in records:
        append(path, KEY, record)
    return path


def test_a_missing_ledger_ends_at_the_start_and_names_nothing_new(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    assert end(path) == Anchor()
    assert newest(path, Anchor()) == {"budget_used_usd": 0.0, "iteration": 0.0, "witness": 0.0}
    assert verify(path, KEY, Anchor()) == (Anchor(), None)


def test_a_last_line_without_its_end_is_not_the_bridge_s(tmp_path: Path) -> None:
    path = ledger(tmp_path, {"event": "a"})
    anchor, problem = verify(path, KEY, Anchor())
    assert problem is None and anchor == end(path)
    with path.open("ab") as handle:
        handle.write(b'{"event": "torn"')
    assert verify(path, KEY, anchor) == (
        anchor,
        "events.jsonl ends in a line the bridge did not write",
    )


def test_the_audit_sees_a_ledger_removed_or_rewritten_at_the_anchor(tmp_path: Path) -> None:
    path = ledger(tmp_path, {"event": "a"}, {"event": "b"})
    anchor = end(path)
    assert audit(path, KEY, Anchor(), anchor) is None
    # A whole, well-chained ledger that is not the one the witness saw end there.
    assert "rewritten" in (audit(path, KEY, Anchor(), Anchor(anchor.size, "0" * 64)) or "")
    # The same length, the last line's text changed: its mac no longer the anchor's.
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"b"', b'"c"')
    path.write_bytes(b"\n".join(lines))
    assert "rewritten" in (audit(path, KEY, Anchor(), anchor) or "")
    path.unlink()
    assert audit(path, KEY, Anchor(), anchor) == (
        f"events.jsonl was cut short (0 of {anchor.size} bytes)"
    )


def test_the_newest_figures_skip_unsealed_and_unreadable_lines(tmp_path: Path) -> None:
    path = ledger(tmp_path, {"event": "a", "budget_used_usd": 0.5, "iteration": 2, "witness": 3})
    forged_mac = b', "mac": "' + b"0" * 64 + b'"}'
    with path.open("ab") as handle:
        handle.write(b'{"iteration": 99}\n')  # unsealed: not the bridge's
        handle.write(b"{not json" + forged_mac + b"\n")  # sealed-looking, unreadable
        handle.write(b"[1, 2" + forged_mac + b"\n")  # readable, but not a record
    assert newest(path, Anchor()) == {"budget_used_usd": 0.5, "iteration": 2.0, "witness": 3.0}
