"""A task in Harbor's layout plus our own `[autopilot_codex]` table (see docs/benchmarks.md):

    <task>/task.toml  instruction.md  environment/repo/  tests/test.sh  tests/test_*.py
    solution/solve.sh

`load(folder)` reads one; `discover(root)` every task folder under a root, sorted by name.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the harness runs on 3.11+, the bridge on 3.10+
    import tomli as tomllib

KINDS = ("ordered-steps", "tempting-fix", "early-stop", "question", "refactor")
DEFAULT_BUDGET_USD = 1.0
DEFAULT_AGENT_TIMEOUT_S = 900.0
DEFAULT_VERIFIER_TIMEOUT_S = 300.0


class TaskError(ValueError):
    """A task folder that does not follow the layout."""


@dataclass(frozen=True)
class Task:
    name: str
    folder: Path
    instruction: str
    kind: str
    budget_usd: float
    agent_timeout_s: float
    verifier_timeout_s: float
    answers: Mapping[str, str] = field(default_factory=dict)

    @property
    def repo(self) -> Path:
        return self.folder / "environment" / "repo"

    @property
    def tests(self) -> Path:
        return self.folder / "tests"

    @property
    def solution(self) -> Path:
        return self.folder / "solution"


def _table(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = doc.get(name, {})
    if not isinstance(value, Mapping):
        raise TaskError(f"[{name}] must be a table")
    return value


def _number(table: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskError(f"{where}: {key} must be a positive number, not {value!r}")
    return float(value)


def load(folder: Path) -> Task:
    """The task in `folder`; a TaskError naming the first thing wrong with it."""
    folder = Path(folder).resolve()
    where = folder.name
    for needed in ("task.toml", "instruction.md", "environment/repo", "tests/test.sh"):
        if not (folder / needed).exists():
            raise TaskError(f"{where}: {needed} is missing")
    try:
        doc = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{where}: task.toml: {exc}") from exc
    ours = _table(doc, "autopilot_codex")
    kind = ours.get("kind", "")
    if kind not in KINDS:
        raise TaskError(f"{where}: [autopilot_codex] kind must be one of {', '.join(KINDS)}")
    answers = ours.get("answers", {})
    if not isinstance(answers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in answers.items()
    ):
        raise TaskError(f"{where}: [autopilot_codex] answers must map strings to strings")
    instruction = (folder / "instruction.md").read_text(encoding="utf-8").strip()
    if not instruction:
        raise TaskError(f"{where}: instruction.md is empty")
    return Task(
        name=folder.name,
        folder=folder,
        instruction=instruction,
        kind=str(kind),
        budget_usd=_number(ours, "budget_usd", DEFAULT_BUDGET_USD, where),
        agent_timeout_s=_number(
            _table(doc, "agent"), "timeout_sec", DEFAULT_AGENT_TIMEOUT_S, where
        ),
        verifier_timeout_s=_number(
            _table(doc, "verifier"), "timeout_sec", DEFAULT_VERIFIER_TIMEOUT_S, where
        ),
        answers=dict(answers),
    )


def discover(root: Path) -> list[Task]:
    """Every task folder (one holding task.toml) directly under `root`, by name."""
    folders = sorted(p for p in Path(root).iterdir() if (p / "task.toml").is_file())
    if not folders:
        raise TaskError(f"no task (a folder with task.toml) under {root}")
    return [load(p) for p in folders]
