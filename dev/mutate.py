"""Mutation audit of the critical modules: each module against its own tests, with cosmic-ray.

    python dev/mutate.py [MODULE ...] [--jobs N] [--out DIR] [--list]

MODULE is a path under bridge/autopilot_codex/ as written in dev/mutation.toml (for example
`rails/shell.py`); with none, every module in the table runs. Each module runs in its own copy of
the work tree (cosmic-ray edits the file on disk, so a mutant never lands in your checkout, and
two modules can run side by side), first unmutated (the tests must pass), then once per mutant.
A mutant is caught when its tests fail or time out. The summary prints mutants, caught and the
score per module; --out DIR also writes each surviving mutant's diff, for writing the test that
kills it, or for the list of equivalent mutants in docs/testing.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # cosmic-ray brings the older reader along
    import toml as tomllib

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "dev" / "mutation.toml"
PACKAGE = Path("bridge") / "autopilot_codex"

# A mutant whose tests run past TIMEOUT_FACTOR times the unmutated selection's own run (at
# least TIMEOUT_FLOOR_S seconds) counts as caught: it hangs, which a user would see. The factor
# leaves room for a machine busier than during the unmutated run; the floor, for a selection so
# short that a pause of the machine would outlast a few times it. Each hanging mutant costs the
# whole timeout, so these are kept low; the timed-out ones are counted apart (`timeouts`), so a
# mutant caught only by a slow machine can be told from one that hangs.
TIMEOUT_FACTOR = 3.0
TIMEOUT_FLOOR_S = 15.0

# The operators the audit keeps, in order of preference, close to what a careless edit does: a
# comparison or a boolean flipped, an `and`/`or` swapped, a condition negated, an except clause
# that no longer catches, a loop that never runs, the arithmetic a budget or a price goes
# through, a boundary moved by one, a constant off by one. The rest of cosmic-ray's operators
# (every binary operator into every other, shifts, bitwise, variable insertion) mostly make
# mutants that crash on import or are equivalent.
KEPT_OPERATORS = (
    r"core/ReplaceComparisonOperator_(Eq_NotEq|NotEq_Eq|Is_IsNot|IsNot_Is|Lt_GtE|GtE_Lt|Gt_LtE|LtE_Gt)$",
    r"core/Replace(AndWithOr|OrWithAnd)$",
    r"core/AddNot$",
    r"core/Replace(TrueWithFalse|FalseWithTrue)$",
    r"core/ExceptionReplacer$",
    r"core/(ZeroIterationForLoop|ReplaceBreakWithContinue|ReplaceContinueWithBreak)$",
    r"core/ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul)$",
    r"core/ReplaceComparisonOperator_(Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt)$",
    r"core/NumberReplacer$",
)


@dataclass
class Module:
    path: str
    tests: list[str]


@dataclass
class Outcome:
    module: str
    mutants: int = 0
    caught: int = 0
    timeouts: int = 0
    unmade: int = 0
    seconds: float = 0.0
    timeout: float = 0.0
    error: str = ""
    survivors: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return 100.0 * self.caught / self.mutants if self.mutants else 100.0


def load_table() -> list[Module]:
    data = tomllib.loads(TABLE.read_text())
    return [Module(path, list(entry["tests"])) for path, entry in data["modules"].items()]


def copy_tree(dest: Path) -> None:
    """Copy the tracked and untracked-but-not-ignored files: the tree as you have it, no venv."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = Path(os.fsdecode(raw))
        source = ROOT / rel
        if not source.is_file():
            continue  # deleted in the work tree but still in the index
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def test_env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    # The copy's package, not the editable install's, in this process and in every hook the
    # tests start (they inherit the environment). No bytecode: a mutant written in the same
    # second as the original, at the same size, would otherwise be read from a stale .pyc.
    env["PYTHONPATH"] = os.pathsep.join([str(tree / "bridge"), str(tree)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def pytest_command(module: Module) -> str:
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *module.tests]
    return shlex.join(args)


def write_config(tree: Path, module: Module, timeout: float) -> Path:
    config = tree / "mutation.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(str(PACKAGE / module.path))}\n"
        f"timeout = {timeout:.0f}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(pytest_command(module))}\n"
        '\n[cosmic-ray.distributor]\nname = "local"\n'
    )
    return config


def thin(session: Path) -> None:
    """Keep one mutant per source line: the first of KEPT_OPERATORS that applies there.

    Every operator on every line would be some 3000 mutants for the critical modules, most of
    them restating one another (`if a == b` flipped, negated, its `==` made `is not`); one per
    line keeps each line's logic under test and the audit within half an hour on two cores.
    """
    # cosmic-ray is the optional `mutation` extra, imported only here.
    from cosmic_ray.work_db import WorkDB  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from cosmic_ray.work_item import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        WorkerOutcome,
        WorkResult,
    )

    patterns = [re.compile(p) for p in KEPT_OPERATORS]

    def rank(name: str) -> int:
        return next((i for i, p in enumerate(patterns) if p.match(name)), len(patterns))

    db = WorkDB(str(session), WorkDB.Mode.open)
    try:
        best: dict[tuple[str, int], tuple[tuple[int, int, int], str]] = {}
        items = sorted(db.pending_work_items, key=lambda item: item.job_id)
        for item in items:
            spec = item.mutations[0]
            key = (str(spec.module_path), spec.start_pos[0])
            order = (rank(spec.operator_name), spec.start_pos[1], spec.occurrence)
            if order[0] == len(patterns) or _keyword_star(spec):
                continue
            if key not in best or order < best[key][0]:
                best[key] = (order, item.job_id)
        kept = {job for _, job in best.values()}
        for item in items:
            if item.job_id not in kept:
                db.set_result(
                    item.job_id,
                    WorkResult(output="thinned", worker_outcome=WorkerOutcome.SKIPPED),
                )
    finally:
        db.close()


def _keyword_star(spec: object) -> bool:
    """cosmic-ray takes the bare `*` of a signature for a multiplication and makes it `/`."""
    if not getattr(spec, "operator_name", "").startswith("core/ReplaceBinaryOperator_Mul"):
        return False
    line, column = spec.start_pos  # type: ignore[attr-defined]
    text: str = Path(spec.module_path).read_text().splitlines()[line - 1]  # type: ignore[attr-defined]
    return text[column + 1 :].lstrip().startswith((",", ")"))


def tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def run_module(module: Module) -> Outcome:
    outcome = Outcome(module.path)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutate-") as tmp:
        tree = Path(tmp)
        copy_tree(tree)
        env = test_env(tree)
        base_started = time.monotonic()
        baseline = subprocess.run(
            shlex.split(pytest_command(module)), cwd=tree, env=env, capture_output=True, text=True
        )
        base_seconds = time.monotonic() - base_started
        if baseline.returncode != 0:
            outcome.error = "tests fail unmutated:\n" + baseline.stdout[-2000:]
            return outcome
        outcome.timeout = mutant_timeout(base_seconds)
        config = write_config(tree, module, outcome.timeout)
        session = tree / "session.sqlite"
        for command in (
            [tool("cosmic-ray"), "init", str(config), str(session)],
            [sys.executable, str(Path(__file__).resolve()), "--thin", str(session)],
            [tool("cosmic-ray"), "exec", str(config), str(session)],
        ):
            step = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
            if step.returncode != 0:
                outcome.error = f"{Path(command[0]).name} failed:\n{step.stderr[-2000:]}"
                return outcome
        dump = subprocess.run(
            [tool("cosmic-ray"), "dump", str(session)],
            cwd=tree,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    for line in dump.splitlines():
        item, result = json.loads(line)
        if result is None or result["worker_outcome"] in ("skipped", "no-test"):
            continue
        if result["worker_outcome"] == "exception":
            # cosmic-ray could not make this mutant (its exception operator on some `except`
            # tuples): no test ran, so it counts neither way.
            outcome.unmade += 1
            continue
        outcome.mutants += 1
        if result["worker_outcome"] == "abnormal" or result["test_outcome"] != "survived":
            outcome.caught += 1
            # cosmic-ray's word for a test run it ended at the timeout.
            outcome.timeouts += result["output"] == "timeout"
        else:
            outcome.survivors.append(describe(item, result))
    outcome.seconds = time.monotonic() - started
    return outcome


def mutant_timeout(base_seconds: float) -> float:
    """Seconds a mutant's tests may run before the mutant counts as caught (it hangs)."""
    return max(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * base_seconds)


def describe(item: dict[str, object], result: dict[str, object]) -> str:
    mutations = item["mutations"]
    assert isinstance(mutations, list)
    first = mutations[0]
    line = first["start_pos"][0]
    return f"{first['module_path']}:{line} {first['operator_name']}\n{result['diff']}"


def report(outcomes: list[Outcome]) -> str:
    rows = ["| module | mutants | caught | % | minutes |", "|---|---|---|---|---|"]
    for o in outcomes:
        if o.error:
            rows.append(f"| `{o.module}` | error | | | |")
            continue
        rows.append(
            f"| `{o.module}` | {o.mutants} | {o.caught} | {o.score:.0f} % | {o.seconds / 60:.1f} |"
        )
    total = sum(o.mutants for o in outcomes)
    caught = sum(o.caught for o in outcomes)
    if total:
        rows.append(f"| all | {total} | {caught} | {100 * caught / total:.0f} % | |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="module paths from dev/mutation.toml")
    parser.add_argument("--jobs", type=int, default=2, help="modules run side by side")
    parser.add_argument(
        "--out", type=Path, help="write summary.md, results.json and survivors/<module>.txt here"
    )
    parser.add_argument("--list", action="store_true", help="print the table and exit")
    parser.add_argument("--thin", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.thin:
        thin(args.thin)
        return 0
    table = load_table()
    if args.list:
        for module in table:
            print(f"{module.path}: {' '.join(module.tests)}")
        return 0
    known = {m.path: m for m in table}
    unknown = [name for name in args.modules if name not in known]
    if unknown:
        parser.error(f"not in {TABLE.name}: {', '.join(unknown)}")
    chosen = [known[name] for name in args.modules] if args.modules else table
    outcomes: list[Outcome] = []
    if args.out:
        (args.out / "survivors").mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_module, module) for module in chosen]
        for future in concurrent.futures.as_completed(futures):
            outcome = future.result()
            outcomes.append(outcome)
            state = outcome.error.splitlines()[0] if outcome.error else f"{outcome.score:.0f} %"
            print(
                f"{outcome.module}: {outcome.caught}/{outcome.mutants} {state}"
                f" in {outcome.seconds / 60:.1f} min"
                f" ({outcome.timeouts} by the {outcome.timeout:.0f} s timeout)",
                flush=True,
            )
            if args.out:
                name = outcome.module.replace("/", "_").removesuffix(".py") + ".txt"
                (args.out / "survivors" / name).write_text("\n".join(outcome.survivors))
    outcomes.sort(key=lambda o: [m.path for m in chosen].index(o.module))
    print(report(outcomes))
    if args.out:
        (args.out / "summary.md").write_text(report(outcomes) + "\n")
        figures = [{k: v for k, v in vars(o).items() if k != "survivors"} for o in outcomes]
        (args.out / "results.json").write_text(json.dumps(figures, indent=2) + "\n")
    failed = [o for o in outcomes if o.error]
    for o in failed:
        print(f"\n{o.module}: {o.error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
