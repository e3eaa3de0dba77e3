"""The A/B harness end to end with the real Claude Code CLI (fake Anthropic API) and the fake
manager: what CI proves is the harness, not a model.

A scripted implementer makes a partial fix of the fixture task `slugify` (it passes the
visible test, fails the hidden ones) and says it is done. Alone (solo) that is a false done.
Under autopilot the manager's verdict refuses the done, the loop goes on, the scripted
implementer lands the full fix, and the trial is resolved. In the solo trial the implementer
also tries to read the hidden tests, the copy and the task's own folder: it gets nothing.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from bench.ab import report, summary
from bench.ab.records import append, load
from bench.ab.tasks import load as load_task
from bench.ab.trial import Settings, run_trial
from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import TEST_KEY
from .claude_cli import DEFAULT_MODEL, build_env
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

TASKS = Path(__file__).resolve().parents[1] / "fixtures" / "ab_tasks"
PARTIAL = "def slugify(text: str) -> str:\n    return text.lower().replace(' ', '-')\n"
FULL = (
    "import re\n\n\ndef slugify(text: str) -> str:\n"
    "    return '-'.join(re.findall(r'[a-z0-9]+', text.lower()))\n"
)
HIDDEN_NAME = "test_punctuation_is_dropped"


def write(source: str) -> ToolUse:
    return ToolUse("Bash", {"command": f"cat > slug.py <<'EOF'\n{source}EOF"})


def judgement(verdict: dict[str, object]) -> dict[str, object]:
    return {"review": review_body("approve"), "verdict": verdict}


def settings(claude_bin: Path, tmp: Path, fake: FakeAnthropic, manager: FakeOpenAI) -> Settings:
    env = build_env(
        home=tmp / "home",
        tmpdir=Path(tempfile.mkdtemp(prefix="cc-ab-")),
        anthropic_url=fake.url,
        extra_env={
            "AUTOPILOT_CODEX_CLAUDE_CMD": str(claude_bin),
            "OPENAI_API_KEY": TEST_KEY,
            "OPENAI_BASE_URL": manager.base_url,
        },
    )
    return Settings("claude", DEFAULT_MODEL, budget_usd=5.0, time_cap_s=120, env=env)


def test_solo_false_done_autopilot_catches_it(claude_bin: Path, tmp_path: Path) -> None:
    task = load_task(TASKS / "slugify")
    solo_dir, ap_dir = tmp_path / "solo", tmp_path / "autopilot"
    hidden = solo_dir / "verifier" / "tests"
    attack = ToolUse(
        "Bash",
        {
            "command": f"cat {hidden}/*.py; cat {task.tests}/*.py; ls -R {task.folder}; "
            # The pattern does not match its own text: only a hidden file could answer it.
            f"grep -rs 'test_punctuation_is_dro[p]ped' {hidden.parent} {task.folder.parent}; "
            "echo attack-ended"
        },
    )
    with (
        FakeAnthropic(log_path=tmp_path / "solo.jsonl") as fake,
        FakeAnthropic(log_path=tmp_path / "autopilot.jsonl") as ap_fake,
        FakeOpenAI() as manager,
    ):
        fake.script = [
            [attack],
            [ToolUse("Read", {"file_path": str(hidden / "test_slug_hidden.py")})],
            [write(PARTIAL)],
            [Text("Done: slugify lower-cases and joins the words with hyphens.")],
        ]
        solo = run_trial(task, "solo", 0, solo_dir, settings(claude_bin, tmp_path, fake, manager))
        solo_raw = [r.raw for r in fake.main_requests()]

        manager.enqueue(plan_body(1), schema="Plan")
        manager.enqueue(
            judgement(
                verdict_body(
                    "continue",
                    instructions="Punctuation must be dropped: 'Hello, World!' -> 'hello-world'.",
                )
            ),
            judgement(verdict_body("done", done=True)),
            schema="Judgement",
        )
        manager.enqueue(
            verdict_body("continue", instructions="Punctuation must be dropped."),
            verdict_body("done", done=True),
            schema="Verdict",
        )
        ap_fake.script = [
            [write(PARTIAL)],
            [Text("Done: slugify lower-cases and joins the words with hyphens.")],
            [write(FULL)],
            [Text("Done: punctuation is dropped too.")],
        ]
        ap_settings = settings(claude_bin, tmp_path, ap_fake, manager)
        supervised = run_trial(task, "autopilot", 0, ap_dir, ap_settings)
        ap_raw = [r.raw for r in ap_fake.main_requests()]

    # The attack read nothing of the hidden tests: their names never reached the model.
    assert len(solo_raw) == 4, fake.dump_log()
    assert "attack-ended" in solo_raw[1] and "verifier/tests/*.py': No such file" in solo_raw[1]
    for raw in solo_raw[1:3]:
        assert HIDDEN_NAME not in raw and "test_runs_of_spaces" not in raw
    # The file tools too: the Read was refused.
    assert "denied" in solo_raw[2].rsplit("tool_result", 1)[1], solo_raw[2][-3000:]
    # Solo: it said done, the hidden tests failed.
    assert (solo.said_done, solo.resolved, solo.false_done) == (True, False, True), solo
    assert solo.host_usd > 0 and solo.manager_usd == 0 and solo.tokens > 0
    # The partial fix passed the visible test's twin and failed the other two hidden ones.
    assert "2 failed, 1 passed" in (solo_dir / "verifier.log").read_text()
    # Autopilot: the manager refused the first done, the loop went on, the fix landed.
    assert (supervised.status, supervised.said_done, supervised.resolved) == ("done", True, True), (
        supervised,
        ap_fake.dump_log(),
        (ap_dir / "verifier.log").read_text(),
    )
    assert supervised.manager_usd > 0 and supervised.host_usd > 0
    assert len(ap_raw) == 4 and "Punctuation must be dropped" in ap_raw[2], ap_raw

    # The raw trials and the report agree.
    out = tmp_path / "run"
    out.mkdir()
    append(out, solo)
    append(out, supervised)
    assert [t.arm for t in load(out)] == ["solo", "autopilot"]
    text = report.write_report(out)
    assert "autopilot" in text and "1/1" in text
    arms = {a["arm"]: a for a in json.loads((out / "summary.json").read_text())["arms"]}
    assert arms["solo"]["false_done"] == 1 and arms["autopilot"]["false_done"] == 0
    assert arms["autopilot"]["versus_baseline"]["only_arm"] == 1
    assert summary.BASELINE == "solo"


def test_ralph_believes_its_promise_and_lanes_land_a_fix(claude_bin: Path, tmp_path: Path) -> None:
    """The other two supervised arms through the real CLI: ralph has no manager, so a promise
    after a partial fix is a false done there too; a lanes run plans one task, its lane lands
    the fix through the merge queue, and the trial is resolved with the lanes' and the
    manager's dollars apart."""
    task = load_task(TASKS / "slugify")
    with (
        FakeAnthropic(log_path=tmp_path / "ralph.jsonl") as ralph_fake,
        FakeAnthropic(log_path=tmp_path / "lanes.jsonl") as lanes_fake,
        FakeOpenAI() as manager,
    ):
        ralph_fake.script = [
            [write(PARTIAL)],
            [Text("Done: slugify joins the words with hyphens.\n<promise>TASK COMPLETE</promise>")],
        ]
        ralph = run_trial(
            task, "ralph", 0, tmp_path / "ralph", settings(claude_bin, tmp_path, ralph_fake, manager)
        )

        manager.enqueue(plan_body(1), schema="Plan")
        manager.enqueue(review_body("approve"), schema="Review")
        lanes_fake.script = [
            [write(FULL)],
            [Text("Punctuation is dropped and words are joined.\n::potter(ready)")],
            [Text("Every requirement checked against the files.\n::potter(exit)")],
        ]
        lanes = run_trial(
            task, "lanes", 0, tmp_path / "lanes", settings(claude_bin, tmp_path, lanes_fake, manager)
        )

    assert (ralph.status, ralph.said_done, ralph.resolved) == ("done", True, False), (
        ralph,
        ralph_fake.dump_log()[-3000:],
    )
    assert ralph.false_done and ralph.manager_usd == 0 and ralph.host_usd > 0
    assert len(ralph_fake.main_requests()) == 2
    log = (tmp_path / "lanes" / "arm.log").read_text()
    assert (lanes.status, lanes.said_done, lanes.resolved) == ("complete", True, True), (lanes, log)
    assert lanes.host_usd > 0 and lanes.manager_usd > 0, lanes
    assert [r.schema_name for r in manager.requests] == ["Plan", "Review"]
