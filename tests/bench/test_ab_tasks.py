"""The bundled A/B tasks pass their self-check, the self-check catches a broken task, the docs
list the tasks as they are, and the tasks' verifier is not talked into a pass by files left in
the work dir.

The check runs as its users run it (`python -m bench.ab.selfcheck`), on the real task folders
and on broken copies of one of them in tmp_path; `leaks` and the verifier run in-process, as
the harness calls them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.ab.selfcheck import leaks, reward
from tests.conftest import GIT_ENV

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "bench" / "ab" / "tasks"
KINDS = ("ordered-steps", "tempting-fix", "early-stop", "question", "refactor")
# A task small enough to copy and break: its hidden tests are tests/test_settings_hidden.py.
SAMPLE = "config-layers"
HIDDEN = "test_settings_hidden.py"


def selfcheck(tmp_path: Path, *args: str) -> tuple[int, str, dict[str, Any]]:
    out = tmp_path / "selfcheck.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.ab.selfcheck", "--json", str(out), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=850, check=False,
    )  # fmt: skip
    data: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    return done.returncode, done.stdout + done.stderr, data


def problems_of(data: dict[str, Any]) -> dict[str, list[str]]:
    return {task["name"]: task["problems"] for task in data["tasks"]}


def broken_copy(tmp_path: Path, name: str) -> Path:
    task = tmp_path / "tasks" / name
    shutil.copytree(TASKS / SAMPLE, task)
    return task


# About 50 s of CPU in all (25 tasks, three stages each): a machine shared with other work can
# stretch that past the suite's default 300 s limit without anything being wrong.
@pytest.mark.timeout(900)
def test_every_bundled_task_passes_its_selfcheck(tmp_path: Path) -> None:
    code, output, data = selfcheck(tmp_path)
    assert code == 0, output
    assert all(not problems for problems in problems_of(data).values()), output
    kinds = Counter(task["kind"] for task in data["tasks"])
    assert len(data["tasks"]) >= 20
    assert {kind: kinds[kind] >= 3 for kind in KINDS} == dict.fromkeys(KINDS, True), kinds


def test_the_docs_table_lists_every_task_as_its_task_toml_says() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.ab.selfcheck", "--table"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    table = done.stdout
    assert table.count("\n") == 2 + len(list(TASKS.glob("*/task.toml")))
    assert table in (ROOT / "docs" / "benchmarks-tasks.md").read_text()


def test_the_selfcheck_catches_each_way_a_task_can_be_broken(tmp_path: Path) -> None:
    leaked_by_name = broken_copy(tmp_path, "leaked-by-name")
    shutil.copy(leaked_by_name / "tests" / HIDDEN, leaked_by_name / "environment/repo/tests")
    leaked_by_content = broken_copy(tmp_path, "leaked-by-content")
    text = (leaked_by_content / "tests" / HIDDEN).read_text()
    # Re-indented and renamed: the whitespace-blind hash still knows it.
    (leaked_by_content / "environment/repo/tests/test_more.py").write_text(
        text.replace("    ", "  ")
    )
    unsolved = broken_copy(tmp_path, "unsolved")
    shutil.rmtree(unsolved / "solution" / "files")
    shutil.copytree(unsolved / "solution" / "partial", unsolved / "solution" / "files")
    no_trap = broken_copy(tmp_path, "no-trap")
    shutil.rmtree(no_trap / "solution" / "partial")
    shutil.copytree(no_trap / "solution" / "files", no_trap / "solution" / "partial")
    hard_paths = broken_copy(tmp_path, "hard-paths")
    script = hard_paths / "tests" / "test.sh"
    script.write_text(script.read_text().replace("${AB_WORK_DIR:-/app}", "/app"))
    dirty_verifier = broken_copy(tmp_path, "dirty-verifier")
    script = dirty_verifier / "tests" / "test.sh"
    script.write_text(script.read_text().replace("PYTHONDONTWRITEBYTECODE=1 ", ""))
    unanswered = broken_copy(tmp_path, "unanswered")
    config = unanswered / "task.toml"
    config.write_text(config.read_text().replace('kind = "ordered-steps"', 'kind = "question"'))

    code, output, data = selfcheck(tmp_path, "--tasks", str(tmp_path / "tasks"))

    assert code == 1, output
    found = problems_of(data)
    expected = {
        "leaked-by-name": "leak: tests/test_settings_hidden.py: has the name of the hidden",
        "leaked-by-content": "leak: tests/test_more.py: has the content of the hidden",
        "unsolved": "solution: hidden tests gave reward 0, expected 1",
        "no-trap": "partial fix: hidden tests gave reward 1, expected 0",
        "hard-paths": "tests/test.sh does not default AB_WORK_DIR to Harbor's /app",
        "dirty-verifier": "solution: tests/test.sh changed the work dir (__pycache__/settings.",
        "unanswered": "task.toml: a question task names no answer",
    }
    for name, problem in expected.items():
        assert any(line.startswith(problem) for line in found[name]), (name, found[name])
    assert "0/7 tasks pass" in output


def test_leaks_in_a_trials_work_tree(tmp_path: Path) -> None:
    """The harness runs `leaks` on the work tree a trial made (a git repository): a hidden test
    copied anywhere in it, re-indented and renamed, is found; git's own files are not read."""
    task = TASKS / SAMPLE
    work = tmp_path / "work"
    shutil.copytree(task / "environment" / "repo", work)
    env = {**GIT_ENV, "PATH": os.environ["PATH"]}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *argv], cwd=work, env=env, check=True)
    assert leaks(task, repo=work) == []

    hidden = (task / "tests" / HIDDEN).read_text()
    (work / "lib").mkdir()
    (work / "lib" / "check_me.py").write_text(hidden.replace("    ", "\t"))
    (work / "lib" / "__init__.py").write_text("")
    subprocess.run(["git", "add", "-A"], cwd=work, env=env, check=True)

    assert leaks(task, repo=work) == [
        f"lib/check_me.py: has the content of the hidden tests/{HIDDEN}"
    ]


# What an implementer could leave in the work dir to make the verifier say 1 without solving
# the task, knowing nothing of the hidden tests: code under test runs in the verifier's process.
ATTACKS = {
    # `python -m pytest` run from the work dir would run this instead of pytest.
    "shadow pytest": {"pytest.py": "raise SystemExit(0)\n"},
    # Imported at start-up from any folder on PYTHONPATH.
    "sitecustomize": {"sitecustomize.py": "import os\nos._exit(0)\n"},
    # A conftest.py that turns every failure into a pass, were it loaded.
    "conftest hook": {
        "conftest.py": (
            "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
        ),
    },
    # The module under test ends the run as soon as the hidden tests import it: exit 0.
    "exit at import": {"settings.py": "import os\nos._exit(0)\n"},
    # ...or hands out functions that skip whichever test calls them (all skipped is exit 0).
    "skip every call": {
        "settings.py": (
            "import pytest\n\n\ndef __getattr__(name):\n"
            "    return lambda *args, **kwargs: pytest.skip('later')\n"
        ),
    },
    # ...or writes the reward itself, then lets the tests fail.
    "write the reward": {
        "settings.py": (
            "import os\n\nfor var in ('AB_REWARD_FILE',):\n"
            "    if var in os.environ:\n"
            "        open(os.environ[var], 'w').write('1')\n"
        ),
    },
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_verifier_is_not_fooled_by_files_left_in_the_work_dir(
    tmp_path: Path, attack: str
) -> None:
    task = TASKS / SAMPLE
    work = tmp_path / "work"
    shutil.copytree(task / "environment" / "repo", work)
    for name, text in ATTACKS[attack].items():
        (work / name).write_text(text)
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    got, tail = reward(task, work, scratch, harbor_shape=False)

    assert got == "0", tail
