"""Question tasks end to end with the real Claude Code CLI (fake Anthropic API) and the fake
manager: the implementer asks through `AskUserQuestion`, the harness's scripted user answers
from the task's `task.toml`, and the answered behaviour lands (the hidden tests pass).

- solo: the CLI puts each question to its client (the harness); a question naming no
  keyword of the task gets "no preference", the one about the open point gets its answer;
- autopilot: the manager leaves the question to the user (`ASK_THE_USER`), the loop pauses,
  the harness answers as the user and resumes the loop for the session, which goes on to done.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.ab.records import Trial
from bench.ab.tasks import Task
from bench.ab.tasks import load as load_task
from bench.ab.trial import run_trial
from bench.ab.user import NO_PREFERENCE
from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .fake_anthropic import FakeAnthropic, Text, ToolUse
from .test_bench_ab_e2e import settings

pytestmark = pytest.mark.e2e

TASK = Path(__file__).resolve().parents[2] / "bench" / "ab" / "tasks" / "truncate-ellipsis"
THE_POINT = "Does the limit count the ellipsis?"


def ask(question: str, header: str) -> ToolUse:
    options = [
        {"label": "Yes", "description": "the result never exceeds the limit"},
        {"label": "No", "description": "the ellipsis comes on top"},
    ]
    payload = {"question": question, "header": header, "multiSelect": False, "options": options}
    return ToolUse("AskUserQuestion", {"questions": [payload]})


def write(source: str) -> ToolUse:
    return ToolUse("Bash", {"command": f"cat > text.py <<'EOF'\n{source}EOF"})


def answered(task: Task) -> str:
    return task.answers["limit"]


def write_after(expected: str, source: str) -> Any:
    def turn(body: dict[str, Any]) -> list[Any]:
        assert expected in json.dumps(body, ensure_ascii=False), "the answer did not arrive"
        return [write(source)]

    return turn


def solution(task: Task) -> str:
    return (task.solution / "files" / "text.py").read_text(encoding="utf-8")


def why(trial: Trial, fake: FakeAnthropic, folder: Path) -> object:
    log = folder / "arm.log"
    return (
        trial,
        fake.dump_log()[-4000:],
        (folder / "verifier.log").read_text()[-2000:],
        log.read_text()[-2000:] if log.is_file() else "",
    )


def test_solo_the_user_answers_from_the_task(claude_bin: Path, tmp_path: Path) -> None:
    task = load_task(TASK)
    with FakeAnthropic(log_path=tmp_path / "solo.jsonl") as fake, FakeOpenAI() as manager:
        fake.script = [
            [ask("Which file should the helpers live in?", "File")],
            [ask(THE_POINT, "Ellipsis")],
            write_after(answered(task), solution(task)),
            [Text("Done: the ellipsis counts towards the limit, as the user said.")],
        ]
        trial = run_trial(
            task, "solo", 0, tmp_path / "solo", settings(claude_bin, tmp_path, fake, manager)
        )
        raw = [r.raw for r in fake.main_requests()]

    assert (trial.said_done, trial.resolved) == (True, True), why(trial, fake, tmp_path / "solo")
    # The first question named no keyword of the task; the second named `limit`.
    assert NO_PREFERENCE in raw[1] and answered(task) not in raw[1]
    assert (trial.questions_asked, trial.questions_answered, trial.questions_by_manager) == (
        2,
        1,
        0,
    )
    assert trial.manager_usd == 0 and trial.host_usd > 0


def test_autopilot_pauses_for_the_user_who_answers_and_resumes(
    claude_bin: Path, tmp_path: Path
) -> None:
    task = load_task(TASK)
    folder = tmp_path / "autopilot"
    with FakeAnthropic(log_path=tmp_path / "autopilot.jsonl") as fake, FakeOpenAI() as manager:
        manager.enqueue(plan_body(1), schema="Plan")
        manager.enqueue(
            {
                "answer": "ASK_THE_USER: only the user knows",
                "confidence": "high",
                "plan_change": None,
            },
            schema="Consultation",
        )
        done = verdict_body("done", done=True)
        manager.enqueue({"review": review_body("approve"), "verdict": done}, schema="Judgement")
        manager.enqueue(done, schema="Verdict")
        fake.script = [
            [ask(THE_POINT, "Ellipsis")],
            write_after(answered(task), solution(task)),
            [Text("Done: the ellipsis counts towards the limit, as the user said.")],
        ]
        trial = run_trial(
            task, "autopilot", 0, folder, settings(claude_bin, tmp_path, fake, manager)
        )
        consulted = manager.requests_for(schema="Consultation")

    assert (trial.status, trial.said_done, trial.resolved) == ("done", True, True), why(
        trial, fake, folder
    )
    assert len(consulted) == 1 and THE_POINT in consulted[0].prompt_text
    assert (trial.questions_asked, trial.questions_answered, trial.questions_by_manager) == (
        1,
        1,
        0,
    )
    log = (folder / "arm.log").read_text()
    assert "$ autopilot-codex resume (exit 0)" in log and "loop resumed (was paused)" in log, log
    assert trial.manager_usd > 0 and trial.host_usd > 0
