"""The terminal's own notification sequence `watch` writes for a new silence."""

from __future__ import annotations

from autopilot_codex.commands.watch import terminal_notice


def test_a_notice_is_one_osc_9_and_one_osc_777_sequence() -> None:
    assert terminal_notice("autopilot-codex: /w: quiet") == (
        "\x1b]9;autopilot-codex: /w: quiet\x07\x1b]777;notify;autopilot-codex;autopilot-codex: /w: quiet\x07"
    )


def test_no_text_can_end_the_sequence_or_start_another() -> None:
    hostile = "a\x07b\x1b]52;c;Zm9v\x07d\x9c;e\n"
    notice = terminal_notice(hostile)
    body = notice.split("\x07")[0].removeprefix("\x1b]9;")
    assert body == "ab]52cZm9vde"
    assert notice.count("\x1b") == 2 and notice.count("\x07") == 2
