"""The bundled A/B tasks check themselves: each is whole, starts failing, and can be solved.

    python -m bench.ab.selfcheck [TASK_DIR ...] [--tasks DIR] [--jobs N] [--json FILE] [--table]

For every task folder (Harbor's layout, see docs/benchmarks-tasks.md):

- the layout is whole and task.toml says what our harness needs ([autopilot_codex] kind, budget,
  answers for a question task);
- no hidden test sits in the starting repo, by name or by content (`leaks`, which the harness
  also runs on a trial's work dir);
- the starting repo fails its hidden tests (reward 0); its visible tests fail, except a
  refactor's, which pass (the behaviour to keep);
- the partial fix in solution/partial/ (the obvious fix, the first part, the other reading of
  the question, a refactor that loses an edge) passes the visible tests and fails the hidden
  ones: a "done" claimed there is a false done;
- the reference solution (solution/solve.sh) makes the hidden tests pass (reward 1) and keeps
  the visible ones passing.

tests/test.sh runs once with our variables (AB_TESTS_DIR, AB_WORK_DIR, AB_REWARD_FILE) and once
with none, in Harbor's shape: the hidden tests at /tests, the work at /app, the reward under
/logs/verifier, laid out by bubblewrap where it is installed. Exit 0 when every task passes.
Standard library only, so the harness and CI can import it without the bridge.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import tomllib

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
KINDS = ("ordered-steps", "tempting-fix", "early-stop", "question", "refactor")
REQUIRED = (
    "task.toml",
    "instruction.md",
    "environment/Dockerfile",
    "environment/repo",
    "tests/test.sh",
    "solution/solve.sh",
    "solution/files",
    "solution/partial",
)
# The verifier's paths as Harbor lays them out; test.sh must default to exactly these.
HARBOR_DEFAULTS = {
    "AB_TESTS_DIR": "/tests",
    "AB_WORK_DIR": "/app",
    "AB_REWARD_FILE": "/logs/verifier/reward.txt",
}
# A run that never ends is a broken task, not a slow one: every hidden suite takes under 2 s.
RUN_TIMEOUT_S = 60.0


@dataclass
class Report:
    """One task's check: what is wrong with it (nothing, when it passes) and how long it took."""

    name: str
    kind: str = ""
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _files(root: Path) -> Iterator[Path]:
    """Every regular file under `root`, bytecode caches left out."""
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path


def _digests(data: bytes) -> set[str]:
    """The file's hash and the hash of its text with all whitespace dropped, so a copy that
    was only re-indented or re-wrapped still matches. Neither for a file of only whitespace
    (an empty __init__.py is no leak)."""
    squeezed = re.sub(rb"\s+", b"", data)
    if not squeezed:
        return set()
    return {hashlib.sha256(data).hexdigest(), "w" + hashlib.sha256(squeezed).hexdigest()}


def leaks(task_dir: Path, repo: Path | None = None) -> list[str]:
    """Hidden tests found in `repo` (the task's starting repo unless given, e.g. a trial's work
    dir): a file with a hidden file's name or content. One line per leak; empty when clean."""
    hidden_dir = task_dir / "tests"
    repo = repo if repo is not None else task_dir / "environment" / "repo"
    hidden = {path.name: path for path in _files(hidden_dir)}
    by_digest = {d: path for path in hidden.values() for d in _digests(path.read_bytes())}
    found: list[str] = []
    for path in _files(repo):
        if any(part == ".git" for part in path.relative_to(repo).parts):
            continue
        shown = path.relative_to(repo).as_posix()
        if path.name in hidden:
            found.append(f"{shown}: has the name of the hidden tests/{path.name}")
            continue
        match = next((by_digest[d] for d in _digests(path.read_bytes()) if d in by_digest), None)
        if match is not None:
            found.append(f"{shown}: has the content of the hidden tests/{match.name}")
    return found


def load_config(task_dir: Path) -> dict[str, object]:
    """task.toml as a dict (raises OSError or tomllib.TOMLDecodeError)."""
    with (task_dir / "task.toml").open("rb") as file:
        return tomllib.load(file)


def _table(config: Mapping[str, object], name: str) -> Mapping[str, object]:
    value = config.get(name)
    return value if isinstance(value, dict) else {}


def layout_problems(task_dir: Path) -> list[str]:
    """What the task's folder lacks or gets wrong before anything runs."""
    problems = [f"missing {rel}" for rel in REQUIRED if not (task_dir / rel).exists()]
    if problems:
        return problems
    try:
        config = load_config(task_dir)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return [f"task.toml does not parse: {exc}"]
    ours = _table(config, "autopilot_codex")
    kind = ours.get("kind")
    answers = ours.get("answers", {})
    budget = ours.get("budget_usd")
    checks = {
        'task.toml: version is not "1.0"': config.get("version") != "1.0",
        f"task.toml: kind {kind!r} is not one of {', '.join(KINDS)}": kind not in KINDS,
        "task.toml: budget_usd is not a positive number": not (
            isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget > 0
        ),
        "task.toml: answers is not a table of strings": not (
            isinstance(answers, dict)
            and all(isinstance(v, str) for v in answers.values())
        ),
        "task.toml: a question task names no answer": kind == "question" and not answers,
        "task.toml: the environment allows the internet": (
            _table(config, "environment").get("allow_internet") is not False
        ),
        "instruction.md is empty": not (task_dir / "instruction.md").read_text().strip(),
        "no hidden tests (tests/test_*.py)": not list((task_dir / "tests").glob("test_*.py")),
        "no visible tests (environment/repo/tests/test_*.py)": not list(
            (task_dir / "environment" / "repo" / "tests").glob("test_*.py")
        ),
        "solution/files is empty": not list(_files(task_dir / "solution" / "files")),
        "solution/partial is empty": not list(_files(task_dir / "solution" / "partial")),
    }
    problems = [text for text, wrong in checks.items() if wrong]
    problems += [
        f"{rel} is not executable"
        for rel in ("tests/test.sh", "solution/solve.sh")
        if not os.access(task_dir / rel, os.X_OK)
    ]
    script = (task_dir / "tests" / "test.sh").read_text()
    for var, default in HARBOR_DEFAULTS.items():
        if f"${{{var}:-{default}}}" not in script:
            problems.append(f"tests/test.sh does not default {var} to Harbor's {default}")
    return problems


def _env(**extra: str) -> dict[str, str]:
    """The environment a verifier or test run sees: ours without the AB_ variables, pytest's
    options, coverage's subprocess measuring (a task's code is none of the bridge's) or Python
    settings that would hide what test.sh does on its own (Harbor's container sets none), with
    this interpreter's folder (and so its pytest) first on PATH."""
    dropped = ("AB_", "PYTEST_", "COVERAGE_", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped) and k != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))
    env.update(extra)
    return env


def _run(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
    try:
        done = subprocess.run(
            list(argv), cwd=cwd, env=dict(env), capture_output=True, text=True,
            timeout=RUN_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {RUN_TIMEOUT_S:.0f} s"
    return done.returncode, (done.stdout + done.stderr)[-2000:]


def visible_pass(work: Path) -> bool:
    """Whether the repo's own tests pass in `work`, run as an implementer would run them: as
    plain `pytest` does, without the current folder on sys.path (-P)."""
    code, _ = _run(
        [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        work, _env(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
    )  # fmt: skip
    return code == 0


@cache
def bubblewrap() -> str | None:
    """bwrap's path when it can make a mount namespace here, else None."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    code, _ = _run([found, "--ro-bind", "/", "/", "true"], Path("/"), _env())
    return found if code == 0 else None


def _harbor_argv(bwrap: str, tests: Path, work: Path, logs: Path) -> list[str]:
    """bwrap arguments for Harbor's shape: this machine's root, with the hidden tests at
    /tests, the work at /app and the logs at /logs, and test.sh given none of our variables."""
    argv = [bwrap, "--dev", "/dev", "--proc", "/proc"]
    for entry in sorted(Path("/").iterdir()):
        if entry.name in ("dev", "proc", "tests", "app", "logs"):
            continue
        if entry.is_symlink():
            argv += ["--symlink", str(entry.readlink()), str(entry)]
        elif entry.is_dir():
            argv += ["--ro-bind", str(entry), str(entry)]
    # The temporary folder stays writable wherever TMPDIR puts it (tmp_path lives there).
    scratch = tempfile.gettempdir()
    argv += ["--bind", scratch, scratch, "--bind", str(tests), "/tests", "--bind", str(work), "/app"]
    argv += ["--bind", str(logs), "/logs", "--chdir", "/app", "--", "bash", "/tests/test.sh"]
    return argv


def reward(task_dir: Path, work: Path, scratch: Path, harbor_shape: bool) -> tuple[str, str]:
    """Run tests/test.sh on `work` with a fresh copy of the hidden tests (outside the work dir)
    and return the reward file's content ("" when it wrote none) and the run's output tail."""
    tests = Path(tempfile.mkdtemp(prefix="hidden-", dir=scratch))
    shutil.copytree(task_dir / "tests", tests, dirs_exist_ok=True)
    logs = Path(tempfile.mkdtemp(prefix="logs-", dir=scratch))
    bwrap = bubblewrap() if harbor_shape else None
    if bwrap is not None:
        file = logs / "verifier" / "reward.txt"
        code, tail = _run(_harbor_argv(bwrap, tests, work, logs), work, _env())
    else:
        file = logs / "reward.txt"
        env = _env(AB_TESTS_DIR=str(tests), AB_WORK_DIR=str(work), AB_REWARD_FILE=str(file))
        code, tail = _run(["bash", str(tests / "test.sh")], work, env)
    got = file.read_text().strip() if file.is_file() else ""
    return got, f"test.sh exit {code}: {tail}"


def _workdir(task_dir: Path, scratch: Path, name: str, *overlays: Path) -> Path:
    work = scratch / name
    shutil.copytree(task_dir / "environment" / "repo", work)
    for overlay in overlays:
        shutil.copytree(overlay, work, dirs_exist_ok=True)
    return work


def _snapshot(work: Path) -> dict[str, str]:
    """Every file under `work` (caches too) by path, with its content's hash."""
    return {
        path.relative_to(work).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(work.rglob("*"))
        if path.is_file()
    }


def _solve(task_dir: Path, work: Path) -> str | None:
    code, tail = _run(["bash", str(task_dir / "solution" / "solve.sh")], work, _env(WORK=str(work)))
    return None if code == 0 else f"solution/solve.sh failed ({code}): {tail}"


def _expect(problems: list[str], stage: str, got: str, want: str, tail: str) -> None:
    if got != want:
        problems.append(f"{stage}: hidden tests gave reward {got or 'none'}, expected {want}\n{tail}")


def run_checks(task_dir: Path, kind: str, scratch: Path) -> list[str]:
    """The three stages (start, partial fix, reference solution) on copies of the repo."""
    problems: list[str] = []
    start = _workdir(task_dir, scratch, "start")
    got, tail = reward(task_dir, start, scratch, harbor_shape=False)
    _expect(problems, "start", got, "0", tail)
    want_visible = kind == "refactor"
    if visible_pass(start) != want_visible:
        said = "pass" if want_visible else "fail"
        problems.append(f"start: the visible tests should {said} for a {kind} task")
    partial = _workdir(task_dir, scratch, "partial", task_dir / "solution" / "partial")
    got, tail = reward(task_dir, partial, scratch, harbor_shape=False)
    _expect(problems, "partial fix", got, "0", tail)
    if not visible_pass(partial):
        problems.append("partial fix: the visible tests should pass (the tempting stop)")
    solved = _workdir(task_dir, scratch, "solved")
    failed = _solve(task_dir, solved)
    if failed is not None:
        return [*problems, failed]
    before = _snapshot(solved)
    got, tail = reward(task_dir, solved, scratch, harbor_shape=True)
    _expect(problems, "solution", got, "1", tail)
    # The verifier only reads the work dir: what a trial left there must stay as it was.
    after = _snapshot(solved)
    changed = sorted(set(before.items()) ^ set(after.items()))
    if changed:
        names = ", ".join(sorted({name for name, _ in changed}))
        problems.append(f"solution: tests/test.sh changed the work dir ({names})")
    if not visible_pass(solved):
        problems.append("solution: the visible tests should still pass")
    return problems


@contextmanager
def _scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="ab-selfcheck-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check_task(task_dir: Path) -> Report:
    """Every check of one task folder."""
    began = time.monotonic()
    report = Report(name=task_dir.name)
    report.problems = layout_problems(task_dir)
    if not report.problems:
        report.kind = str(_table(load_config(task_dir), "autopilot_codex")["kind"])
        report.problems += [f"leak: {line}" for line in leaks(task_dir)]
        with _scratch() as scratch:
            report.problems += run_checks(task_dir, report.kind, scratch)
    report.seconds = time.monotonic() - began
    return report


def task_dirs(root: Path) -> list[Path]:
    """The task folders under `root` (those holding a task.toml), by name."""
    return sorted(path.parent for path in root.glob("*/task.toml"))


def check_all(folders: Sequence[Path], jobs: int) -> list[Report]:
    """check_task over every folder, `jobs` at a time, in the folders' order."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(check_task, folders))


def table(folders: Sequence[Path]) -> str:
    """The Markdown table of the tasks (name, kind, why supervision matters) that
    docs/benchmarks-tasks.md holds, from each task.toml."""
    rows = ["| task | kind | what makes supervision matter |", "|---|---|---|"]
    found = [(_table(load_config(folder), "autopilot_codex"), folder.name) for folder in folders]
    rank = {kind: index for index, kind in enumerate(KINDS)}
    # By kind, in KINDS' order, then by name.
    found.sort(key=lambda pair: (rank.get(str(pair[0].get("kind")), len(KINDS)), pair[1]))
    for ours, name in found:
        rows.append(f"| `{name}` | {ours.get('kind', '')} | {ours.get('why', '')} |")
    return "\n".join(rows) + "\n"


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.ab.selfcheck", description=__doc__)
    parser.add_argument("task", nargs="*", type=Path, help="task folders (default: every task)")
    parser.add_argument("--tasks", type=Path, default=TASKS_DIR, help="folder of task folders")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--json", type=Path, help="also write the reports here as JSON")
    parser.add_argument("--table", action="store_true", help="print the tasks' table and stop")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    folders = [path.resolve() for path in args.task] or task_dirs(args.tasks)
    if not folders:
        print(f"no tasks under {args.tasks}", file=sys.stderr)
        return 1
    if args.table:
        print(table(folders), end="")
        return 0
    reports = check_all(folders, args.jobs)
    for report in reports:
        status = "ok  " if not report.problems else "FAIL"
        print(f"{status} {report.name:<28} {report.kind:<14} {report.seconds:5.1f} s")
        for problem in report.problems:
            print("     " + problem.replace("\n", "\n     "))
    shape = "bubblewrap" if bubblewrap() else "not run (no usable bubblewrap)"
    bad = sum(1 for report in reports if report.problems)
    print(f"{len(reports) - bad}/{len(reports)} tasks pass; Harbor's shape: {shape}")
    if args.json is not None:
        data = {"harbor_shape": bubblewrap() is not None, "tasks": [vars(r) for r in reports]}
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
