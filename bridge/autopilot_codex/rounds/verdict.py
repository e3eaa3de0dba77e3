"""The manager's word on a run: after a clean verifier round, is the whole diff since the start
the objective done? Asked only then, charged against the run's budget, never believed blindly:
anything but a `done` verdict keeps the run going, and a failed call accepts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import gitrepo
from ..contract import clip
from ..credentials import redact
from ..errors import BridgeError
from ..manager import prompts
from .handoff import WORKSPACE

if TYPE_CHECKING:
    from ..config import Config
    from ..manager.select import ManagerFactory

INSTRUCTIONS = (
    prompts.ROLE + " The implementer worked on the objective in rounds, and a fresh verifier "
    "round found nothing left to change. Judge the whole diff since the run began against the "
    "objective. decision=done only when every requirement of the objective is met and "
    "committed; abort when it cannot be met; otherwise continue, and say what is missing in "
    "reason. " + prompts.UNTRUSTED_NOTE
)


def verdict_prompt(goal: str, commits: list[str], diff: str, cap: int) -> prompts.Prompt:
    head = "The objective (from the user):\n" + prompts.framed("OBJECTIVE", clip(goal, 4000))
    # Subjects a round's last message gave: the implementer's text, data like the diff.
    head += "\n\nCommits since the run began:\n" + (
        prompts.framed("COMMITS", clip(chr(10).join(commits), 3000)) if commits else "(none)"
    )
    room = cap - len(INSTRUCTIONS) - len(head) - 400
    text = head + "\n\nThe whole diff since the run began:\n"
    text += prompts.framed("DIFF", prompts.bound_diff(redact(diff), max(room, 500)))
    return prompts.Prompt(INSTRUCTIONS, redact(text))


@dataclass
class ManagerVerdict:
    """The driver's manager check, `(worktree, base_sha) -> done?`, for a configured backend.

    `cost_usd` adds up every call; the driver charges the growth to the run. `budget_left` is
    set by the driver before each call: a call whose worst case does not fit is not made.
    """

    goal: str
    config: Config
    factory: ManagerFactory
    cost_usd: float = 0.0
    budget_left: float | None = None

    def __call__(self, worktree: Path, base_sha: str) -> bool:
        from ..manager import schemas
        from ..manager.select import worst_case_usd
        from .hold import store_for

        baseline = store_for(worktree).nested_path
        diff = gitrepo.diff_since(worktree, base_sha, exclude=(WORKSPACE,), baseline=baseline)
        commits = gitrepo.commits_since(worktree, base_sha)
        prompt = verdict_prompt(self.goal, commits, diff.text, self.config.prompt_chars)
        estimate = worst_case_usd(
            self.config,
            self.config.model,
            prompt.instructions + prompt.text,
            self.config.max_output_tokens,
        )
        if self.budget_left is not None and estimate > self.budget_left:
            raise BridgeError(
                f"the budget left (${self.budget_left:.2f}) cannot cover the manager's check "
                f"(up to ${estimate:.2f})"
            )
        manager = self.factory(self.config.model, self.config)
        outcome = manager.ask(schemas.Verdict, prompt.instructions, prompt.text)
        self.cost_usd += outcome.cost_usd
        if outcome.value is None:
            raise BridgeError(outcome.error or "the manager gave no verdict")
        return outcome.value.decision == "done"


def make(goal: str, backend: str) -> ManagerVerdict:
    """The check for `--manager openai|codex`, refused up front when that backend cannot work."""
    from ..config import load_config
    from ..manager.select import configured_problem, select

    config = load_config({"manager": backend})
    problem = configured_problem(config)
    if problem:
        raise BridgeError(problem)
    return ManagerVerdict(goal, config, select(config))
