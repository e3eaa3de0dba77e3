"""The A/B harness with the real Codex CLI as the implementer (fake Responses API, fake
manager): a scripted partial fix of `slugify` followed by "done" is a false done alone; in the
rounds arm the manager's verdict refuses the first verified exit, the next round lands the fix,
and the trial is resolved. Each trial runs behind the wall the product puts around a round."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autopilot_codex.commands import install
from bench.ab.tasks import load as load_task
from bench.ab.trial import Settings, run_trial
from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import TEST_KEY
from .codex_cli import DEFAULT_MODEL, base_env, write_config
from .fake_codex_model import FakeCodexModel, Shell

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not (shutil.which("bwrap") and shutil.which("socat")),
        reason="the trials' wall needs bubblewrap and socat",
    ),
]

TASKS = Path(__file__).resolve().parents[1] / "fixtures" / "ab_tasks"
PARTIAL = "def slugify(text: str) -> str:\n    return text.lower().replace(' ', '-')\n"
FULL = (
    "import re\n\n\ndef slugify(text: str) -> str:\n"
    "    return '-'.join(re.findall(r'[a-z0-9]+', text.lower()))\n"
)


def write(source: str) -> Shell:
    return Shell(f"cat > slug.py <<'EOF'\n{source}EOF")


def settings(codex_bin: Path, tmp: Path, fake: FakeCodexModel, manager: FakeOpenAI) -> Settings:
    codex_home = tmp / "codex-home"
    write_config(codex_home, fake.base_url)
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    env = {
        **base_env(tmp / "home", codex_home),
        "AUTOPILOT_CODEX_CODEX_CMD": str(codex_bin),
        "OPENAI_API_KEY": TEST_KEY,
        "OPENAI_BASE_URL": manager.base_url,
    }
    return Settings("codex", DEFAULT_MODEL, budget_usd=5.0, time_cap_s=150, env=env)


def test_codex_solo_false_done_rounds_catch_it(codex_bin: Path, tmp_path: Path) -> None:
    task = load_task(TASKS / "slugify")
    with (
        FakeCodexModel(log_path=tmp_path / "solo.jsonl") as solo_model,
        FakeCodexModel(log_path=tmp_path / "rounds.jsonl") as rounds_model,
        FakeOpenAI() as manager,
    ):
        solo_model.script = [[write(PARTIAL)], "Done: slugify joins the words with hyphens."]
        solo = run_trial(
            task, "solo", 0, tmp_path / "solo", settings(codex_bin, tmp_path / "s", solo_model, manager)
        )

        manager.enqueue(
            verdict_body("continue", instructions="Punctuation must be dropped."),
            verdict_body("done", done=True),
            schema="Verdict",
        )
        rounds_model.script = [
            [write(PARTIAL)],
            "Joined the words with hyphens.\n::potter(ready)",
            "Checked against the objective.\n::potter(exit)",
            [write(FULL)],
            "Punctuation is dropped now.\n::potter(ready)",
            "Checked against the objective.\n::potter(exit)",
        ]
        rounds = run_trial(
            task,
            "rounds",
            0,
            tmp_path / "rounds",
            settings(codex_bin, tmp_path / "r", rounds_model, manager),
        )

    assert (solo.said_done, solo.resolved, solo.false_done) == (True, False, True), solo
    assert solo.tokens > 0 and solo.manager_usd == 0
    assert (rounds.status, rounds.said_done, rounds.resolved) == ("complete", True, True), (
        rounds,
        (tmp_path / "rounds" / "verifier.log").read_text(),
    )
    assert rounds.manager_usd > 0
    assert [r.schema_name for r in manager.requests] == ["Verdict", "Verdict"]


def test_codex_autopilot_refuses_the_partial_done_and_the_fix_lands(
    codex_bin: Path, tmp_path: Path
) -> None:
    """The in-session arm with Codex: the trial's own CODEX_HOME (the user's config carried in,
    the plugin's hooks installed there, the user's left as it was), the loop planned from a
    terminal and claimed by the session's first prompt; the manager refuses the first done."""
    task = load_task(TASKS / "slugify")
    with FakeCodexModel(log_path=tmp_path / "ap.jsonl") as model, FakeOpenAI() as manager:
        run_settings = settings(codex_bin, tmp_path / "a", model, manager)
        user_config = (tmp_path / "a" / "codex-home" / "config.toml").read_bytes()
        manager.enqueue(plan_body(1), schema="Plan")
        manager.enqueue(
            {"review": review_body("approve"), "verdict": verdict_body("continue", instructions="Punctuation must be dropped.")},
            {"review": review_body("approve"), "verdict": verdict_body("done", done=True)},
            schema="Judgement",
        )
        manager.enqueue(
            verdict_body("continue", instructions="Punctuation must be dropped."),
            verdict_body("done", done=True),
            schema="Verdict",
        )
        manager.enqueue(*[review_body("approve")] * 4, schema="Review")
        model.script = [
            [write(PARTIAL)],
            "Done: slugify joins the words with hyphens.",
            [write(FULL)],
            "Done: punctuation is dropped too.",
        ]
        trial = run_trial(task, "autopilot", 0, tmp_path / "autopilot", run_settings)
        raws = [r.raw for r in model.model_requests]

    log = (tmp_path / "autopilot" / "arm.log").read_text()
    assert (trial.status, trial.said_done, trial.resolved) == ("done", True, True), (trial, log)
    assert trial.manager_usd > 0 and trial.tokens > 0
    assert len(raws) == 4 and "Punctuation must be dropped" in raws[2]
    # The user's Codex home is as it was; the trial's got the hooks.
    assert (tmp_path / "a" / "codex-home" / "config.toml").read_bytes() == user_config
    assert (tmp_path / "autopilot" / "codex-home" / "hooks.json").is_file()
