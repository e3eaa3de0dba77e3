"""Attack first: a lane's text costs the manager more than the hold the lanes set aside for it.

Every manager call of a lanes run is held from the one budget before it is made, at the worst
case of a prompt bounded by `prompt_chars` (`begin.worst_usd`). That worst case is priced as
the pricing's ceiling prices text, a token for every UTF-8 byte, over `prompt_chars` ASCII
characters. The prompts were bounded in characters: a lane's diff of emoji or rare CJK
characters (4 bytes each) within the bound in characters costs up to four times its hold, so
the run spends past its cap. The class: any text of the lane's in any call's prompt (the
landing's review, the follow-up's diff and the refusal's detail).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from autopilot_codex.config import Config
from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes.ask import REVIEW_INSTRUCTIONS, Asker
from autopilot_codex.lanes.begin import worst_usd
from autopilot_codex.manager import Manager, Outcome
from autopilot_codex.manager.schemas import Review, Task
from autopilot_codex.manager.select import worst_case_usd
from tests.conftest import git

CONFIG = Config()
# A character of four UTF-8 bytes (a CJK ideograph outside the basic plane).
WIDE = "\U00020000"


class Recording:
    """A manager that approves every review and writes one follow-up; keeps what it was sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def ask(self, schema: type[Any], instructions: str, prompt: str) -> Outcome[Any]:
        self.sent.append((instructions, prompt))
        if schema is Review:
            return Outcome(Review(decision="approve", summary="ok", findings=[], revert_files=[]))
        task = Task(id="T9", title="redo", files=[], steps=["redo it"], acceptance=[], tests=[])
        return Outcome(task)


def _asker() -> tuple[Asker, Recording]:
    manager = Recording()
    return Asker(cast("Manager", manager), CONFIG), manager


def _within_hold(manager: Recording) -> bool:
    """Every call made cost at most what the lanes hold for one (`begin.worst_usd`)."""
    hold = worst_usd(CONFIG, CONFIG.max_output_tokens)
    return all(
        worst_case_usd(CONFIG, CONFIG.model, instructions + " " + prompt, CONFIG.max_output_tokens)
        <= hold
        for instructions, prompt in manager.sent
    )


def _wide_diff(chars: int) -> str:
    return "diff --git a/t.txt b/t.txt\n+" + WIDE * chars + "\n"


def test_control_an_ascii_review_at_the_bound_is_asked_and_within_its_hold() -> None:
    asker, manager = _asker()
    diff = "diff --git a/t.txt b/t.txt\n+" + "x" * (CONFIG.prompt_chars - 6000 - 100) + "\n"
    assert asker.review("task", diff)[0]
    assert len(manager.sent) == 1 and _within_hold(manager)


def test_a_review_of_wide_characters_never_costs_more_than_its_hold() -> None:
    asker, manager = _asker()
    diff = _wide_diff(CONFIG.prompt_chars - 6000 - 100)  # within the bound in characters
    approved, why = asker.review("task", diff)
    assert _within_hold(manager)
    # Refused unasked, as a diff too long to review whole is.
    assert (approved, manager.sent) == (False, []) and "split the task" in why


def test_a_small_review_of_wide_characters_is_still_asked() -> None:
    asker, manager = _asker()
    assert asker.review("task", _wide_diff(2_000))[0]
    assert len(manager.sent) == 1 and _within_hold(manager)


def test_a_follow_up_of_wide_characters_never_costs_more_than_its_hold() -> None:
    asker, manager = _asker()
    detail = WIDE * 4_000  # the checks' output, the lane's text: clipped in characters
    asker.follow_up("task", "checks", detail, _wide_diff(CONFIG.prompt_chars))
    assert len(manager.sent) == 1 and _within_hold(manager)
    # The diff is still there, cut to fit, not left out.
    assert WIDE * 100 in manager.sent[0][1]


def test_the_review_instructions_leave_the_hold_its_room() -> None:
    """The instructions are the bridge's: ASCII, within the room the bound leaves them."""
    assert REVIEW_INSTRUCTIONS.isascii() and len(REVIEW_INSTRUCTIONS) < 6000


def test_a_plan_of_a_tree_of_wide_names_is_asked_within_its_hold(tmp_path: Path) -> None:
    """A plan's prompt lists the tree's files: names of wide characters are the user's own
    (or a lane's, on a later plan), never a reason to refuse nor to pay past the hold."""
    for i in range(500):  # the plan lists 400: 240 bytes of name each, 96k in all
        (tmp_path / f"{WIDE * 60}{i}.txt").write_text("x\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "wide names")
    asker, manager = _asker()
    asker.plan(tmp_path, "tidy the tree")
    hold = worst_usd(CONFIG, CONFIG.plan_output_tokens)
    [(instructions, prompt)] = manager.sent[:1]
    assert WIDE in prompt
    ceiling = worst_case_usd(
        CONFIG, CONFIG.model, instructions + " " + prompt, CONFIG.plan_output_tokens
    )
    assert ceiling <= hold


def test_no_call_is_made_that_could_cost_more_than_its_hold() -> None:
    """The one door every call of the lanes passes: whatever text reaches it unbounded."""
    asker, manager = _asker()
    with pytest.raises(BridgeError, match="more than the call's hold"):
        asker.follow_up("task", WIDE * CONFIG.prompt_chars, "", "")
    assert manager.sent == []
