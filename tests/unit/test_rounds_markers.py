"""Marker parsing: signals count where the protocol puts them, mentions never do."""

from __future__ import annotations

import dataclasses

import pytest

from autopilot_codex.rounds.markers import Markers, parse, strip


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("::potter(ready)", Markers(ready=True)),
        ("All done.\n\n::potter(ready)\n", Markers(ready=True)),
        ("All done. ::potter(ready)", Markers(ready=True)),
        ("Verified every requirement.\n::potter(exit)  \n\n", Markers(exit=True)),
        ("Done.\r\n::potter(exit)\r\n", Markers(exit=True)),
        ("::potter(ready)\n::potter(exit)", Markers(ready=True, exit=True)),
    ],
)
def test_markers_that_count(message: str, expected: Markers) -> None:
    assert parse(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "",
        "Work remains: tests fail.",
        # Mentions in prose, backticks and fences are not signals.
        "When it is verified I will append `::potter(exit)`.",
        "`::potter(ready)`",
        "I must not write ::potter(exit) yet, two tests fail.",
        "The protocol:\n```\n::potter(ready)\n```\nNot there yet.",
        "Quoting:\n~~~text\nappend ::potter(exit)\n~~~",
        "Unclosed:\n```\n::potter(exit)",
        "::potter(ready).",
        "::potter(READY)",
        "::potter(readyy)",
        "x::potter(ready)",
    ],
)
def test_mentions_do_not_count(message: str) -> None:
    assert parse(message) == Markers()


def test_a_marker_after_a_closed_fence_counts() -> None:
    assert parse("```\ncode\n```\n::potter(ready)").ready


def test_strip_removes_only_the_markers_that_counted() -> None:
    message = "Summary of the work.\nAll good. ::potter(ready)\n\n"
    assert strip(message) == "Summary of the work.\nAll good."
    quoted = "Say `::potter(exit)` when verified."
    assert strip(quoted) == quoted
    assert strip("::potter(exit)") == ""


def test_names() -> None:
    assert Markers(ready=True, exit=True).names() == ["ready", "exit"]
    assert Markers().names() == []


def test_markers_are_a_value_not_a_record_to_edit() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Markers().ready = True  # type: ignore[misc]
