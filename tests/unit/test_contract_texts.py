"""What the implementer reads of a review: where each finding is, as precisely as the manager
said it, and a rejection's revert line only when there are files to revert."""

from __future__ import annotations

from autopilot_codex.contract import findings_text, reject_reason
from autopilot_codex.state import Finding


def finding(file: str | None, start: int | None = None, end: int | None = None) -> Finding:
    return Finding("high", file, start, end, "wrong total", "add the tax")


def test_each_finding_says_where_as_far_as_it_is_known() -> None:
    text = findings_text(
        [
            finding(None),
            finding("a.py"),
            finding("a.py", 3),
            finding("a.py", 3, 3),
            finding("a.py", 3, 9),
        ]
    )
    assert [line for line in text.splitlines() if not line.startswith("   Fix")] == [
        "1. [high] wrong total",
        "2. [high] wrong total (a.py)",
        "3. [high] wrong total (a.py:3)",
        "4. [high] wrong total (a.py:3)",
        "5. [high] wrong total (a.py:3-9)",
    ]


def test_a_rejection_without_files_names_no_revert() -> None:
    text = reject_reason("Wrong approach.", [finding("a.py", 1)], [], "0123456789abcdef")
    assert "REJECTED. Wrong approach." in text and "1. [high] wrong total (a.py:1)" in text
    assert "git restore" not in text
    assert text.endswith("do not patch on top of the rejected change.")
    with_files = reject_reason("Wrong approach.", [], ["a b.py"], "0123456789abcdef")
    assert "git restore --source=0123456789ab --staged --worktree -- 'a b.py'" in with_files
