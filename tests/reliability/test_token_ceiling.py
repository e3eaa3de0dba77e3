"""A manager call's worst case holds what the implementer's text really costs in tokens.

The guard reserves a call's worst case before making it. It once estimated the prompt at 3
characters a token. That holds for prose, but the tokenizer reads bytes and a token is at least
one: a character outside ASCII is 2 to 4 bytes, and one the tokenizer has no merge for costs a
token a byte; ASCII the merges do not fit (letters, digits and punctuation interleaved) costs up
to a token a character. The implementer writes the diff the manager reads: a diff of emoji
cost up to 12 times the estimate, one of crafted ASCII 3 times, so a call the budget let
through spent past it. The only true ceiling is a token a byte.
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
    3 characters a token for ASCII (prose: the first test is about the others)."""
    ascii_chars = sum(1 for c in text if c.isascii())
    return ascii_chars // 3 + len(text.encode("utf-8", "surrogatepass")) - ascii_chars


def every_byte(text: str) -> int:
    """The tokenizer's count at its very worst: a token a byte, whatever the text."""
    return len(text.encode("utf-8", "surrogatepass"))


def a_diff_at_the_edge_of_the_budget(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], unit: str
) -> float:
    """A planned loop whose tracked file now holds `unit` 80,000 times, its budget set to what
    it spent plus 1.01 times the question's worst case; the budget."""
    plan(repo, manager)
    capsys.readouterr()
    (repo / "notes.txt").write_text("notes\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "notes")
    (repo / "notes.txt").write_text(unit * 80_000 + "\n")
    worst = worst_case(repo, manager)
    return set_budget(repo, lambda used: used + 1.01 * worst)


def test_a_diff_of_characters_outside_ascii_never_spends_past_the_budget(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    budget = a_diff_at_the_edge_of_the_budget(repo, manager, capsys, "\U0001f600")  # 4 bytes

    def bill(request: LoggedRequest) -> Reply:
        return Reply(body=consultation(), input_tokens=tokens(request.prompt_text))

    manager.responder = bill
    ask_process(repo, "is the file right?").communicate(timeout=PATIENCE_S)
    assert manager.requests_for(), "the question within the budget was asked"
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["budget_used_usd"] <= budget


def test_a_diff_of_crafted_ascii_never_spends_past_the_budget(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    # Letters, digits and punctuation interleaved: no merge fits, about a token a character.
    budget = a_diff_at_the_edge_of_the_budget(repo, manager, capsys, "a1!")
    billed: list[LoggedRequest] = []

    def bill(request: LoggedRequest) -> Reply:
        """The dearest the server may be: both billed attempts (an invalid answer, then its
        corrective retry), each at a token a byte and the full output allowance."""
        billed.append(request)
        body = consultation() if len(billed) > 1 else {"answer": 1}
        cap = request.body.get("max_output_tokens") if request.body else None
        assert isinstance(cap, int), "the request caps its output"
        return Reply(body=body, input_tokens=every_byte(request.prompt_text), output_tokens=cap)

    manager.responder = bill
    ask_process(repo, "is the file right?").communicate(timeout=PATIENCE_S)
    assert len(billed) == 2, "the question within the budget was asked, and retried once"
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["budget_used_usd"] <= budget
