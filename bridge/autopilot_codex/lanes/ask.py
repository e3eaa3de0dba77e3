"""The lanes driver's three questions to the manager: the plan, a landing's review, and a
follow-up task for a refused landing. One call each (an unusable answer gets the corrective
retries of every manager call), so the manager's requests grow with the tasks, never with lanes × rounds.

In a durable run each call is a step (`durable.steps`): a driver recovered after a kill gets the
answer and its cost back from the record, never asks (nor pays) twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from .. import gitrepo
from ..contract import clip
from ..durable.steps import begun_before, step
from ..errors import BridgeError
from ..manager import prompts

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..config import Config
    from ..manager import Manager
    from ..manager.schemas import Plan, Task

M = TypeVar("M", bound="BaseModel")
R = TypeVar("R")
T = TypeVar("T")
REVIEW_INSTRUCTIONS = (
    prompts.ROLE + " A lane finished its task on a branch of its own; its diff is about to be "
    "merged. decision=approve when it is a correct, complete step for its task; otherwise fix "
    "or reject and say why in summary. " + prompts.UNTRUSTED_NOTE
)
FOLLOW_UP_INSTRUCTIONS = (
    prompts.ROLE + " A lane's work could not be merged (the reason and its diff follow). Write "
    "ONE new task that redoes or repairs that work on top of the work merged so far, so that "
    "it merges cleanly and passes the checks. Give it a new id and depends_on empty. "
    + prompts.UNTRUSTED_NOTE
)


@dataclass
class Asker:
    """The manager, asked through one backend; `cost_usd` adds up every call."""

    manager: Manager
    config: Config
    cost_usd: float = 0.0
    calls: int = 0

    def plan(self, root: Path, goal: str) -> Plan:
        from ..manager.schemas import Plan

        files, count = gitrepo.tracked_files(root)
        recent = gitrepo.commits_since(root, gitrepo.EMPTY_TREE, limit=10)
        prompt = _fit(
            self.config.prompt_chars,
            lambda n: prompts.plan_prompt(goal, files, count, recent, n),
            lambda made: _size(made.instructions + " " + made.text),
        )
        # A plan that is no graph (a cycle, an unknown id) gets the corrective retries of
        # every manager answer (`manager.answers`), as `plan` does.
        return self._ask(Plan, prompt.instructions, prompt.text)

    def review(self, title: str, diff: str) -> tuple[bool, str]:
        from ..manager.schemas import Review

        room = max(2000, self.config.prompt_chars - 6000)
        # In bytes, as the call's hold prices text: a character may cost four.
        if _size(diff) > room:
            # Cut, the review could not see what is past the cut: never approved unseen
            # (as the queue refuses a diff longer than it keeps whole). Nothing is asked.
            return False, (
                f"The lane's diff is {_size(diff)} bytes, more than the review reads whole "
                f"({room}): split the task so each part can be reviewed."
            )
        text = f"The task: {_clip(title, 2000)}\n\nIts diff:\n" + prompts.framed("DIFF", diff)
        answer = self._ask(Review, REVIEW_INSTRUCTIONS, text)
        return answer.decision == "approve", answer.summary

    def follow_up(self, title: str, reason: str, detail: str, diff: str) -> Task:
        from ..manager.schemas import Task

        text = (
            f"The refused task: {_clip(title, 2000)}\nRefused for: {reason}:\n"
            # The checks' output and the conflicting files' names are the lane's text: data.
            + prompts.framed("REFUSAL", _clip(detail, 4000))
            + "\n\nIts diff against the work merged so far:\n"
            + prompts.framed(
                "DIFF",
                _fit(
                    max(2000, self.config.prompt_chars - 9000),
                    lambda n: prompts.bound_diff(diff, n),
                    _size,
                ),
            )
        )
        return self._ask(Task, FOLLOW_UP_INSTRUCTIONS, text)

    def _ask(self, schema: type[M], instructions: str, text: str) -> M:
        name = f"manager.{schema.__name__.lower()}"
        answer: tuple[M | None, float, str | None] = step(
            name, self._call, schema, instructions, text
        )
        value, cost_usd, error = answer
        self.calls += 1
        self.cost_usd += cost_usd
        if value is None:
            raise BridgeError(f"the manager could not answer: {error}")
        return value

    def _call(
        self, schema: type[M], instructions: str, text: str
    ) -> tuple[M | None, float, str | None]:
        # A call a killed driver made (and paid) before this step was recorded: what it cost
        # is not known, so its worst case is counted with this one's, as its hold was.
        worst = self._worst(schema)
        if _ceiling(self.config, instructions + " " + text, schema) > worst:
            # Held at `worst` from the budget: a call that could cost more is never made.
            raise BridgeError("the manager's prompt could cost more than the call's hold")
        cut = worst if begun_before() else 0.0
        outcome = self.manager.ask(schema, instructions, text)
        return outcome.value, outcome.cost_usd + cut, outcome.error

    def _worst(self, schema: type[BaseModel]) -> float:
        """What a call is held at (`begin.worst_usd`): a prompt of `prompt_chars` bytes."""
        return _ceiling(self.config, "x" * self.config.prompt_chars, schema)


def _ceiling(config: Config, prompt: str, schema: type[BaseModel]) -> float:
    from ..manager.select import worst_case_usd

    plan = schema.__name__ == "Plan"
    tokens = config.plan_output_tokens if plan else config.max_output_tokens
    return float(worst_case_usd(config, config.model, prompt, tokens))


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _clip(text: str, room: int) -> str:
    return _fit(room, lambda n: clip(text, n), _size)


def _fit(room: int, build: Callable[[int], T], measure: Callable[[T], int]) -> T:
    """What `build` makes for a bound of `room` characters, the bound narrowed until it takes
    at most `room` UTF-8 bytes too (a character may be four): the bytes are what a call's hold
    prices."""
    limit = room
    while True:
        made = build(limit)
        size = measure(made)
        if size <= room or limit <= 1:
            return made
        limit = max(1, min(limit - 1, limit * room // size))


class Metered(Protocol):
    """What `metered` keeps: an Asker's (or a stand-in's) running cost and count of calls."""

    cost_usd: float
    calls: int


def metered(asker: Metered, name: str, func: Callable[[T], R], arg: T) -> R:
    """`func(arg)` as one step whose manager calls' cost and count (on `asker`) are part of its
    record: a recovered driver adds them back from there, never from a second call."""

    def body() -> tuple[R, float, int]:
        cost, calls = asker.cost_usd, asker.calls
        try:
            return func(arg), asker.cost_usd - cost, asker.calls - calls
        finally:
            asker.cost_usd, asker.calls = cost, calls

    out, cost, calls = step(name, body)
    asker.cost_usd, asker.calls = asker.cost_usd + cost, asker.calls + calls
    return out


def for_backend(backend: str | None) -> Asker:
    """The manager the lanes ask, refused up front when its backend cannot work."""
    from ..config import load_config
    from ..manager.select import configured_problem, select

    if backend in (None, "none"):
        raise BridgeError("lanes need a manager to plan and review: --manager openai or codex")
    config = load_config({"manager": backend})
    problem = configured_problem(config)
    if problem:
        raise BridgeError(problem)
    return Asker(select(config)(config.model, config), config)
