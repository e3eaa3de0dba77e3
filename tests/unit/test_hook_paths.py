"""A payload's file paths: one the OS would refuse (a NUL in it) names no file, so no reader
ever sees it (found by the hook fuzzer: the spend reader raised ValueError, an internal error)."""

from __future__ import annotations

import json

from autopilot_codex import hookio


def test_a_transcript_path_holding_a_nul_names_no_file() -> None:
    raw = json.dumps({"session_id": "s", "cwd": "/", "transcript_path": "/tmp/t\u0000.jsonl"})
    assert hookio.parse(raw.encode(), "Stop").transcript_path == ""


def test_a_plain_transcript_path_is_kept() -> None:
    raw = json.dumps({"session_id": "s", "cwd": "/", "transcript_path": "/tmp/t.jsonl"})
    assert hookio.parse(raw.encode(), "Stop").transcript_path == "/tmp/t.jsonl"
