"""A desktop notification's body is markup to the notification server (`notify-send` passes
it on; servers that announce `body-markup` render `<a href>`, `<b>`, `<img>`), and the
implementer's text reaches it: a question left to the user is told with its words. So a
question could draw a link the user clicks, or a bold "approved", in the user's desktop. The
text goes in as text: `&`, `<` and `>` as entities, which the specification names.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from autopilot_codex import notify

ASKED = 'Approve? <a href="https://example.invalid/x">yes</a> <b>&amp;</b>'


@pytest.fixture
def system_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    sender = folder / "notify-send"
    sender.write_text("#!/bin/sh\nexit 0\n")
    sender.chmod(sender.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(notify, "SYSTEM_BIN", (str(folder),))
    monkeypatch.setattr(sys, "platform", "linux")
    return folder


def test_the_implementers_markup_reaches_the_desktop_as_text(system_bin: Path) -> None:
    [[program, title, body]] = notify._desktop(f"autopilot-codex: /repo: paused ({ASKED})")
    assert (program, title) == (str(system_bin / "notify-send"), "autopilot-codex")
    assert "<" not in body and ">" not in body
    assert body == (
        'autopilot-codex: /repo: paused (Approve? &lt;a href="https://example.invalid/x"&gt;'
        "yes&lt;/a&gt; &lt;b&gt;&amp;amp;&lt;/b&gt;)"
    )


def test_plain_text_is_unchanged(system_bin: Path) -> None:
    [[_, _, body]] = notify._desktop("autopilot-codex: /repo: done")
    assert body == "autopilot-codex: /repo: done"
