"""A command's refusal quotes what it could not take: a setting's name from the state home's
`config.json` (which an unguarded implementer writes), a file's name, git's last line. The
user reads it on a terminal, outside any wall, and a terminal obeys the control sequences in
it (a clipboard write, the title, lines erased), as it would in a command's own text, which
`output.visible` already writes out. Through the real CLI: no refusal prints one either."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autopilot_codex.paths import state_home
from tests.conftest import cli

SEQUENCES = "\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2K\x1b]0;done\x07\x9b2J\u202e"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize(
    "verb", [["plan", "--budget", "1", "a", "goal"], ["ralph", "a", "prompt"], ["ask", "why"]]
)
def test_a_refusal_prints_no_control_sequence_of_the_implementer(
    repo: Path, capsys: pytest.CaptureFixture[str], verb: list[str]
) -> None:
    home = state_home()
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({f"x{SEQUENCES}": 1}))

    code, out = cli(capsys, "-C", str(repo), *verb)

    assert code != 0 and "unknown setting" in out and "\\u001b]52;c;" in out, out
    assert not CONTROL.findall(out), out
