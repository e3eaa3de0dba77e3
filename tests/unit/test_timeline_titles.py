"""The report's timeline names what the watch and a session's end left in the ledger."""

from __future__ import annotations

import json
from pathlib import Path

from autopilot_codex import loopfiles
from autopilot_codex.report.timeline import build


def test_a_session_end_and_a_silence_are_named_in_the_timeline(tmp_path: Path) -> None:
    stamp = "2026-03-01T10:00:00+00:00"
    events = [
        {"ts": stamp, "event": "session.ended", "session": "s-1", "reason": "logout"},
        {"ts": stamp, "event": "watch.silent", "kind": "quiet", "reason": "no ledger event"},
    ]
    (tmp_path / "state.json").write_text(json.dumps({"status": "running", "style": "autopilot"}))
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    entries = build(loopfiles.load(tmp_path))
    titles = {e.title: e for e in entries}
    ended = titles["session ended (logout) while the loop ran, without a Stop"]
    assert ended.detail == "session s-1"
    assert "watch: silent (quiet)" in titles
