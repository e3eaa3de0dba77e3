"""One more state write's witness: what is on disk stays vouched for until the write lands,
but only if it was vouched for already, so a changed file is never laundered by the next save."""

from __future__ import annotations

from autopilot_codex.witness import Witness

OLD, NEW, FORGED = '{"n": 1}\n', '{"n": 2}\n', '{"n": 1, "status": "done"}\n'
MARK, MARK2, FORGED_MARK = "loop a\n", "loop b\n", "loop forged\n"


def born() -> Witness:
    return Witness().after(OLD, None, marker=MARK, marker_on_disk=None)


def test_the_state_on_disk_stays_vouched_for_until_the_write_lands() -> None:
    seen = born().after(NEW, OLD, marker=MARK, marker_on_disk=MARK)
    assert seen.vouches(OLD) and seen.vouches(NEW) and seen.last == NEW


def test_a_changed_state_on_disk_is_not_carried_over() -> None:
    seen = born().after(NEW, FORGED, marker=MARK, marker_on_disk=MARK)
    assert seen.vouches(NEW) and not seen.vouches(FORGED) and not seen.vouches(OLD)


def test_a_changed_marker_on_disk_is_not_carried_over() -> None:
    kept = born().after(NEW, OLD, marker=MARK2, marker_on_disk=MARK)
    assert kept.vouches_marker(MARK) and kept.vouches_marker(MARK2)
    forged = born().after(NEW, OLD, marker=MARK2, marker_on_disk=FORGED_MARK)
    assert forged.vouches_marker(MARK2) and not forged.vouches_marker(FORGED_MARK)
    assert not forged.vouches_marker(None)
