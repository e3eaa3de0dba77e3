"""A manager call's worst case holds what the implementer's text really costs in tokens.

The guard reserves a call's worst case before making it, estimating the prompt at 3
characters a token. That holds for prose, but the tokenizer reads bytes: a character outside
ASCII is 2 to 4 bytes, and one the tokenizer has no merge for costs a token a byte. The
implementer writes the diff the manager reads: a diff of emoji or rare CJK characters cost up
to 12 times the estimate, so a call the budget let through spent past it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import git
from tests.fakes.openai_server import FakeOpenAI, LoggedRequest, Reply
from tests.reliability.test_reservations import (
    PATIENCE_S,
    ask_process,
    consultation,
    plan,
    set_budget,
    worst_case,
)


def tokens(text: str) -> int:
    """The tokenizer's count at its worst for characters outside ASCII (a token a byte), at
    the bridge's own rate for ASCII (prose: this test is about the others)."""
    ascii_chars = sum(1 for c in text if c.isascii())
    return ascii_chars // 3 + len(text.encode("utf-8", "surrogatepass")) - ascii_chars


def test_a_diff_of_characters_outside_ascii_never_spends_past_the_budget(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    plan(repo, manager)
    capsys.readouterr()
    (repo / "notes.txt").write_text("notes\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "notes")
    (repo / "notes.txt").write_text("\U0001f600" * 80_000 + "\n")  # 4 bytes each
    worst = worst_case(repo, manager)
    budget = set_budget(repo, lambda used: used + 1.01 * worst)

    def bill(request: LoggedRequest) -> Reply:
        return Reply(body=consultation(), input_tokens=tokens(request.prompt_text))

    manager.responder = bill
    ask_process(repo, "is the file right?").communicate(timeout=PATIENCE_S)
    assert manager.requests_for(), "the question within the budget was asked"
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["budget_used_usd"] <= budget
