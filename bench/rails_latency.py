"""The rails' cost: PreToolUse through the real launcher, with a loop running in the worktree.

The loop is planned through the real CLI (fake manager). Each round times, in a shuffled order:
the baseline `<python> -c pass`; PreToolUse on a Bash command that is allowed and one that is
denied (both parse the line with tree-sitter-bash); PreToolUse on a file tool (no parser); and
`<python> -c "import tree_sitter, tree_sitter_bash"` to show the parser's import alone. The
figures are medians over the rounds, as ratios to the baseline. The parse of one line is timed
in process as well.

The hooks are answered by the resident helper (warmed first; its child's CPU time is added, see
helper_stats); the allowed line is also timed with the helper off (the direct path), as
context. Target (issue 26): PreToolUse Bash with a loop running <= 2x.

    python bench/rails_latency.py [--json FILE]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchlib import (
    Case,
    FakeManager,
    Row,
    emit,
    expect,
    hook_argv,
    hook_payload,
    measure,
    real_python,
    rounds,
    silent_ok,
    start_loop,
    timed_row,
    workdir,
)
from helper_stats import DIRECT_ENV, STATS_ENV, HelperCpu, warm

BENCH = "rails latency"
LIMIT = 2.0
ALLOWED = "cd src && pytest -q tests/ 2>&1 | tail -20 && git status --short && git diff --stat"
DENIED = "env GIT_TRACE=1 sh -c 'git -C . push --force origin main'"
PARSE = """
import time
from autopilot_codex.rails import shell
t = time.perf_counter()
shell.commands("true", {"HOME": "/h"}, "/w")
first = time.perf_counter() - t
t = time.perf_counter()
for _ in range(200):
    shell.commands(%r, {"HOME": "/h"}, "/w")
print(first * 1000, (time.perf_counter() - t) / 200 * 1000)
"""


def denied(proc: subprocess.CompletedProcess[bytes]) -> None:
    expect(b'"deny"' in proc.stdout, f"not denied: {proc.stdout[:300]!r}")


def cases(repo: Path, env: dict[str, str], python: str) -> list[Case]:
    def bash(command: str) -> bytes:
        return hook_payload("PreToolUse", repo, tool_name="Bash", tool_input={"command": command})

    read = hook_payload(
        "PreToolUse", repo, tool_name="Read", tool_input={"file_path": str(repo / "README.md")}
    )
    return [
        Case("python -c pass", [python, "-c", "pass"], env),
        Case(
            "PreToolUse Bash, allowed", hook_argv("PreToolUse"), env, bash(ALLOWED), check=silent_ok
        ),
        Case("PreToolUse Bash, denied", hook_argv("PreToolUse"), env, bash(DENIED), check=denied),
        Case("PreToolUse Read (no parser)", hook_argv("PreToolUse"), env, read, check=silent_ok),
        Case(
            "PreToolUse Bash, allowed, direct (no helper)",
            hook_argv("PreToolUse"),
            {**env, **DIRECT_ENV},
            bash(ALLOWED),
            check=silent_ok,
        ),
        Case(
            "import tree_sitter + bash grammar",
            [python, "-c", "import tree_sitter, tree_sitter_bash"],
            env,
        ),
    ]


def parse_cost(python: str, env: dict[str, str], bridge: Path) -> tuple[float, float]:
    out = subprocess.run(
        [python, "-c", PARSE % ALLOWED],
        env={**env, "PYTHONPATH": str(bridge)},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


def main() -> int:
    python = real_python()
    n_rounds = rounds(30, 5)
    with workdir("rails") as tmp, FakeManager() as manager:
        loop = start_loop(tmp, python, manager, files=20)
        loop.env.update(STATS_ENV)
        warm(loop.home, lambda: loop.hook("PreToolUse", hook_payload("PreToolUse", loop.repo)))
        helped = HelperCpu(loop.home)
        timed = cases(loop.repo, loop.env, python)
        timed[1:4] = [helped.wrap(c) for c in timed[1:4]]
        samples = measure(timed, n_rounds)
        helped.add_to(samples)
        first, each = parse_cost(
            python, loop.env, Path(__file__).resolve().parent.parent / "bridge"
        )
    base = timed[0].name
    limits = {timed[1].name: LIMIT, timed[2].name: LIMIT}
    rows: list[Row] = [
        timed_row(BENCH, c.name, samples, c.name, base, limit=limits.get(c.name))
        for c in timed[1:]
    ]
    rows.append(Row(BENCH, "first parse (import + grammar + parse)", first))
    rows.append(Row(BENCH, "each later parse of the allowed line", each))
    emit(rows, [f"{n_rounds} rounds; interpreter {Path(python).name}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
