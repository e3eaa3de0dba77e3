"""Run every benchmark and print one summary table of the figures that have a target.

    python bench/run_all.py [--with-bootstrap] [--clean-site] [--all] [--strict] [--skip NAME]

Each benchmark runs in its own process (`python bench/<name>.py --json FILE`), one after the
other. BENCH_QUICK=1 is passed on. `--with-bootstrap` adds the slow first-use benchmark (it
downloads packages); `--clean-site` adds the interpreter-without-startup-hooks figures;
`--all` prints every row, not only those with a target; `--strict` exits 1 if a target is missed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import QUICK, Row, format_rows, real_python

HERE = Path(__file__).resolve().parent
BENCHES = (
    "idle_hook",
    "active_hook",
    "scale",
    "economy",
    "spend_read",
    "hook_profile",
    "critical_path",
    "git_runner",
    "walled_git",
    "shadow",
)
WITH_CLEAN_SITE = ("idle_hook", "active_hook", "hook_profile")


def run_one(
    python: str, name: str, clean_site: bool, out: Path
) -> tuple[list[Row], list[str], float, int]:
    argv = [python, str(HERE / f"{name}.py"), "--json", str(out)]
    if clean_site and name in WITH_CLEAN_SITE:
        argv.append("--clean-site")
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=HERE.parent)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or not out.exists():
        return [], [], elapsed, proc.returncode or 1
    data = json.loads(out.read_text())
    return [Row(**r) for r in data["rows"]], list(data["notes"]), elapsed, 0


def main() -> int:
    args = sys.argv[1:]
    skip = {args[i + 1] for i, a in enumerate(args[:-1]) if a == "--skip"}
    names = [n for n in BENCHES if n not in skip]
    if "--with-bootstrap" in args:
        names.append("bootstrap")
    python = real_python()
    rows: list[Row] = []
    failed: list[str] = []
    timings: list[str] = []
    with tempfile.TemporaryDirectory(prefix="autopilot-bench-all-") as tmp:
        for name in names:
            print(f"\n=== {name} ===", flush=True)
            got, _notes, elapsed, code = run_one(
                python, name, "--clean-site" in args, Path(tmp) / f"{name}.json"
            )
            timings.append(f"{name} {elapsed:.0f} s")
            if code:
                failed.append(name)
            rows += got
    shown = rows if "--all" in args else [r for r in rows if r.target]
    print(f"\n=== summary ({'quick' if QUICK else 'full'} mode; {', '.join(timings)}) ===")
    print(format_rows(shown))
    missed = [r for r in rows if r.ok is False]
    passed = [r for r in rows if r.ok is True]
    print(
        f"\n{len(passed)} targets met, {len(missed)} missed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    if failed or ("--strict" in args and missed):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
