"""Where an active hook's time goes: a diagnostic, not a target.

On the loop of bench/active_hook.py (5,000 files, 300-line diff, the diff reviewed once) the
review-cache-hit hook is run

1. through the real launcher with PYTHONPROFILEIMPORTTIME=1 (`python -X importtime`): the
   imports, by top-level package (self time) and by bridge module (cumulative);
2. under bench/profile_wrapper.py: interpreter start-up, the hook's own wall time, each git
   process it starts and its fsyncs;
3. the git commands of a review alone, with and without the secret-file pathspecs, on 5,000 and
   50,000 files;
4. the state file's load and save in-process, for a fresh loop and for the 500-task loop of
   bench/scale.py.

    python bench/hook_profile.py [--clean-site] [--json FILE]
"""

from __future__ import annotations

import collections
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from active_hook import prepare
from benchlib import (
    BRIDGE,
    GIT_ENV,
    QUICK,
    FakeManager,
    ManagerScript,
    Row,
    build_repo,
    clean_environ,
    clean_site_python,
    edit_hook_payload,
    emit,
    expect,
    make_diff,
    real_python,
    rounds,
    start_loop,
    workdir,
)
from helper_stats import DIRECT_ENV

BENCH = "profile"
HERE = Path(__file__).resolve().parent
MAIN = BRIDGE / "autopilot_codex_main.py"
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def parse_importtime(text: str) -> list[tuple[int, int, int, str]]:
    """(depth, self us, cumulative us, module) per line of `-X importtime` output, in order."""
    rows = []
    for line in text.splitlines():
        match = IMPORT_LINE.match(line)
        if match:
            depth = (len(match[3]) - 1) // 2
            rows.append((depth, int(match[1]), int(match[2]), match[4]))
    return rows


def direct_imports(rows: list[tuple[int, int, int, str]]) -> list[tuple[str, str, int]]:
    """(importer, imported, cumulative us) for each import made directly by a module: children
    are printed before their parent, one level deeper."""
    pairs = []
    for i, (depth, _, _, name) in enumerate(rows):
        j = i - 1
        while j >= 0 and rows[j][0] > depth:
            if rows[j][0] == depth + 1:
                pairs.append((name, rows[j][3], rows[j][2]))
            j -= 1
    return pairs


def import_profile(
    env: dict[str, str], stdin: bytes, restore: Any, n: int, label: str = ""
) -> list[Row]:
    by_package: dict[str, list[float]] = collections.defaultdict(list)
    by_module: dict[str, list[float]] = collections.defaultdict(list)
    external: dict[str, list[float]] = collections.defaultdict(list)
    own: dict[str, list[float]] = collections.defaultdict(list)
    totals: list[float] = []
    for _ in range(n):
        restore()
        # The launcher's own command line, with -X importtime: hooks start isolated (-I),
        # which ignores PYTHONPROFILEIMPORTTIME. The direct path: the helper is off here.
        proc = subprocess.run(
            [env["AUTOPILOT_CODEX_PYTHON"], "-X", "importtime", "-I", "-S", str(MAIN)]
            + ["hook", "PostToolUse", "--host", "claude"],
            input=stdin,
            capture_output=True,
            env={**env, **DIRECT_ENV},
        )
        rows = parse_importtime(proc.stderr.decode())
        package: collections.Counter[str] = collections.Counter()
        for _depth, self_us, cumulative, name in rows:
            package[name.split(".")[0]] += self_us
            if name.startswith("autopilot_codex"):
                by_module[name].append(cumulative / 1000)
                own[name].append(self_us / 1000)
        for importer, imported, cumulative in direct_imports(rows):
            if importer.startswith("autopilot_codex") and not imported.startswith(
                "autopilot_codex"
            ):
                external[f"{imported} (from {importer})"].append(cumulative / 1000)
        for name, value in package.items():
            by_package[name].append(value / 1000)
        totals.append(sum(c for d, _, c, _ in rows if d == 0) / 1000)
    med = statistics.median
    out = [Row(BENCH, f"imports{label}, all (cumulative, top level)", med(totals))]
    top = sorted(by_package.items(), key=lambda kv: -med(kv[1]))[:12]
    out += [Row(BENCH, f"imports{label}, self time: {k}", med(v)) for k, v in top]
    mods = sorted(by_module.items(), key=lambda kv: -med(kv[1]))[:8]
    out += [Row(BENCH, f"imports{label}, cumulative: {k}", med(v)) for k, v in mods]
    bodies = sorted(own.items(), key=lambda kv: -med(kv[1]))[:6]
    out += [Row(BENCH, f"imports{label}, module body: {k}", med(v)) for k, v in bodies]
    ext = sorted(external.items(), key=lambda kv: -sum(kv[1]) / n)[:12]
    # Mean over runs (0 when another module imported it first in a run), so shares add up.
    out += [Row(BENCH, f"imports{label}, stdlib/third party: {k}", sum(v) / n) for k, v in ext]
    return out


def phases(python: str, env: dict[str, str], stdin: bytes, restore: Any, n: int) -> list[Row]:
    runs = []
    for _ in range(n):
        restore()
        start = time.perf_counter()
        proc = subprocess.run(
            [python, str(HERE / "profile_wrapper.py"), "hook", "PostToolUse", "--host", "claude"],
            input=stdin,
            capture_output=True,
            env={**env, **DIRECT_ENV, "PYTHONPATH": str(BRIDGE)},
        )
        wall = (time.perf_counter() - start) * 1000
        line = proc.stderr.decode().rsplit("PROFILE ", 1)[-1]
        runs.append({**json.loads(line), "wall_ms": wall})
    med = statistics.median
    rows = [
        Row(BENCH, "phase: whole process, no launcher (wall)", med(r["wall_ms"] for r in runs)),
        Row(BENCH, "phase: hook, imports + work", med(r["hook_ms"] for r in runs)),
        Row(
            BENCH,
            "phase: fsync, total",
            med(r["fsync_ms"] for r in runs),
            note=f"{runs[0]['fsyncs']} fsyncs",
        ),
    ]
    per_command: dict[str, list[float]] = collections.defaultdict(list)
    for r in runs:
        for i, (name, ms) in enumerate(r["git"]):
            per_command[f"{i + 1}. git {name}"].append(ms)
    rows += [Row(BENCH, f"phase: subprocess {k}", med(v)) for k, v in sorted(per_command.items())]
    rows.append(
        Row(BENCH, "phase: all subprocesses", med(sum(ms for _, ms in r["git"]) for r in runs))
    )
    return rows


def git_costs(repo: Path, label: str, n: int) -> list[Row]:
    from autopilot_codex.rails.secrets import NAME_PATTERNS as SECRET_PATTERNS

    env = {**clean_environ(), **GIT_ENV}
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, env=env, check=True
    ).stdout.strip()
    secrets = ["--", ".", *(f":(exclude,glob)**/{p}" for p in SECRET_PATTERNS)]
    commands = {
        "git diff (patch), secret pathspecs": [
            "diff",
            base,
            "--no-color",
            "--find-renames",
            *secrets,
        ],
        "git diff (patch), no pathspec": ["diff", base, "--no-color", "--find-renames"],
        "git diff --name-only, secret pathspecs": ["diff", base, "--name-only", *secrets],
        "git diff --name-only, no pathspec": ["diff", base, "--name-only"],
        "git ls-files --others, secret pathspecs": [
            "ls-files",
            "--others",
            "--exclude-standard",
            *secrets,
        ],
        "git diff --patch-with-raw (one process)": [
            "diff",
            base,
            "--no-color",
            "--find-renames",
            "--patch-with-raw",
        ],
        "git rev-parse HEAD": ["rev-parse", "HEAD"],
    }
    samples: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(n):
        for name, args in commands.items():
            start = time.perf_counter()
            subprocess.run(["git", *args], cwd=repo, capture_output=True, env=env, check=True)
            samples[name].append((time.perf_counter() - start) * 1000)
    return [Row(BENCH, f"{label}: {k}", statistics.median(v)) for k, v in samples.items()]


def state_io(tmp: Path, python: str, n: int) -> list[Row]:
    """Store.load and Store.save in this process, fresh loop vs the 500-task loop of scale.py."""
    import scale
    from autopilot_codex.store import Store

    rows = []
    with FakeManager(ManagerScript(tasks=5, rich=True)) as manager:
        fresh = start_loop(
            tmp, python, manager, files=20, name="state-fresh", home=tmp / "state-home-io"
        )
        manager.script.tasks = scale.TASKS
        old = start_loop(
            tmp, python, manager, files=20, name="state-old", home=tmp / "state-home-io"
        )
    scale.age(old)
    for label, loop in (("fresh loop", fresh), ("500-task loop", old)):
        store = Store(loop.repo, home=loop.home)
        size = store.state_path.stat().st_size / 1024
        loads, saves = [], []
        for _ in range(n):
            start = time.perf_counter()
            state = store.load()
            loads.append((time.perf_counter() - start) * 1000)
            assert state is not None
            start = time.perf_counter()
            store.save(state)
            saves.append((time.perf_counter() - start) * 1000)
        rows.append(Row(BENCH, f"state load, {label} ({size:.0f} KiB)", statistics.median(loads)))
        rows.append(Row(BENCH, f"state save, {label}", statistics.median(saves)))
    return rows


def main() -> int:
    python = real_python()
    n = rounds(9, 3)
    with workdir("profile") as tmp, FakeManager() as manager:
        loop, running, _ = prepare(tmp, python, manager)
        stdin = edit_hook_payload(loop.repo, "src/pkg0000/mod000000.py")
        rows = import_profile(loop.env, stdin, running.restore, n)
        if "--clean-site" in sys.argv:
            clean = clean_site_python(tmp, python)
            clean_env = {**loop.env, "AUTOPILOT_CODEX_PYTHON": clean}
            rows += import_profile(clean_env, stdin, running.restore, n, " [clean site]")
        rows += phases(python, loop.env, stdin, running.restore, n)
        expect(loop.reviews() == 1, "a profiled hook called the manager")
        rows += git_costs(loop.repo, "5,000 files", n)
        if not QUICK:
            big = build_repo(tmp / "repo-50k", 50_000)
            make_diff(big, 300)
            rows += git_costs(big, "50,000 files", n)
        rows += state_io(tmp, python, n)
    emit(rows, ["diagnostic figures in ms, medians; no targets"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
