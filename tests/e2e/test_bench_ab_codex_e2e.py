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
from tests.conftest import verdict_body
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
