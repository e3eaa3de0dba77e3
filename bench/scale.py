"""Target 3: flat at scale. A loop with a 500-task plan, 100,000 ledger events, half its tasks
done and a full review cache answers its hooks and `status` within 1.2x of a fresh loop
(a 5-task plan, an empty ledger).

Both loops are planned through the real CLI with the fake manager and have one reviewed edit;
the old loop's history is then written into its state.json and events.jsonl. Each figure is
the old loop's median over the fresh loop's, measured in the same rounds. `<python> -c pass`
is timed too, for context.

    python bench/scale.py [--json FILE]
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from benchlib import (
    ActiveLoop,
    Case,
    FakeManager,
    ManagerScript,
    Row,
    edit_hook_payload,
    emit,
    expect,
    hook_argv,
    hook_payload,
    last_event,
    launcher,
    loop_dir,
    make_diff,
    measure,
    real_python,
    rounds,
    silent_ok,
    start_loop,
    timed_row,
    workdir,
)

BENCH = "3 scale"
TASKS = 500
EVENTS = 100_000
LIMIT = 1.2
EDITED = "src/pkg0000/mod000000.py"


def finding(n: int) -> dict[str, Any]:
    return {
        "severity": ("critical", "high", "medium", "low")[n % 4],
        "file": f"src/pkg0000/mod{n:06d}.py",
        "line_start": n % 90 + 1,
        "line_end": n % 90 + 4,
        "title": f"finding {n}: the error path drops the caller's context",
        "recommendation": "raise a BridgeError that names the file and the line, and test it",
    }


def review_record(n: int) -> dict[str, Any]:
    decision = "approve" if n % 3 else "fix"
    return {
        "diff_hash": hashlib.sha256(f"old diff {n}".encode()).hexdigest(),
        "decision": decision,
        "summary": f"review {n}: the change is a correct step but misses an edge case",
        "reason": "" if decision == "approve" else f"[autopilot-codex] Review: fix {n}",
        "findings": [finding(n * 3 + k) for k in range(3 if decision == "fix" else 0)],
        "at": "2026-01-01T00:00:00+00:00",
    }


def age(loop: ActiveLoop) -> None:
    """Give the loop the history of a long run: done tasks, a full review cache, a long ledger."""
    from autopilot_codex.styles.autopilot.record import REVIEW_CACHE_SIZE

    state = loop.state()
    done = TASKS // 2
    state["autopilot"].update(
        completed_tasks=[f"T{n}" for n in range(1, done + 1)],
        current_task=f"T{done + 1}",
        reviewed=[
            *state["autopilot"]["reviewed"],
            *(review_record(n) for n in range(REVIEW_CACHE_SIZE - 1)),
        ],
    )
    state.update(
        iteration=400,
        max_iterations=1_000,
        budget_usd=500.0,
        budget_used_usd=120.0,
        tool_events=60_000,
        stop_events=800,
    )
    loop.write_state(state)
    kinds = ("review.approve", "review.cached", "verdict.continue", "review.fix", "compact")
    lines: list[dict[str, Any]] = []
    for n in range(EVENTS - 3):
        record: dict[str, Any] = {
            "ts": "2026-01-01T00:00:00+00:00",
            "event": kinds[n % len(kinds)],
            "decision": "allow",
            "reason": f"event {n} of the benchmark's history",
            "status": "running",
            "iteration": n // 250,
            "budget_used_usd": round(n * 0.0012, 6),
            "session": "sess-bench-1",
            "tokens_in": 4000 + n % 900,
            "tokens_out": 300,
            "cost_usd": 0.0112,
            "error": None,
        }
        lines.append(record)
    # Through the bridge's own ledger, so every line is sealed and chained as a real run's;
    # the last one under the lock, so the witness's anchor ends past the history.
    from autopilot_codex.store import Store

    store = Store(loop.repo, home=loop.home)
    # The loop's own recent events stay last, as they were when the history was prepended.
    recent = [{k: v for k, v in e.items() if k not in ("mac", "witness")} for e in store.tail_events(3)]
    for record in lines:
        store.append_event(**record)
    with store.locked():
        for record in recent:
            store.append_event(**record)


def cases_for(name: str, loop: ActiveLoop) -> list[Case]:
    repo, env = loop.repo, loop.env

    def cached(proc: Any) -> None:
        silent_ok(proc)
        # The hook answered at once; its background worker finds the diff reviewed.
        expect(last_event(repo, loop.home) == "review.approve", f"{name}: reviewed again")

    def printed(proc: Any) -> None:
        expect(
            proc.returncode == 0 and b"autopilot-codex" in proc.stdout,
            f"{name}: {proc.stdout[:200]!r}",
        )

    bash: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": "pytest -q"}}
    return [
        Case(
            f"{name} PostToolUse Bash",
            hook_argv("PostToolUse"),
            env,
            hook_payload("PostToolUse", repo, **bash),
            check=silent_ok,
        ),
        Case(
            f"{name} cache hit",
            hook_argv("PostToolUse"),
            env,
            edit_hook_payload(repo, EDITED),
            check=cached,
        ),
        Case(
            f"{name} PreToolUse",
            hook_argv("PreToolUse"),
            env,
            hook_payload("PreToolUse", repo, **bash),
            check=silent_ok,
        ),
        Case(f"{name} status", launcher("-C", str(repo), "status"), env, check=printed),
        Case(
            f"{name} status --json",
            launcher("-C", str(repo), "status", "--json"),
            env,
            check=lambda p: expect(p.returncode == 0, f"{name}: status --json failed"),
        ),
    ]


def main() -> int:
    python = real_python()
    with workdir("scale") as tmp, FakeManager(ManagerScript(tasks=5, rich=True)) as manager:
        fresh = start_loop(tmp, python, manager, files=200, name="fresh")
        manager.script.tasks = TASKS
        old = start_loop(tmp, python, manager, files=200, name="old")
        for loop in (fresh, old):
            make_diff(loop.repo, 60)
            silent_ok(loop.hook("PostToolUse", edit_hook_payload(loop.repo, EDITED)))
        expect(manager.requests("Review").__len__() == 2, "the setup edits were not reviewed")
        age(old)
        state_kib = (loop_dir(old.repo, old.home) / "state.json").stat().st_size / 1024
        ledger_mib = (loop_dir(old.repo, old.home) / "events.jsonl").stat().st_size / 2**20
        fresh_cases = cases_for("fresh", fresh)
        old_cases = cases_for("old", old)
        baseline = Case("python -c pass", [python, "-c", "pass"], fresh.env)
        samples = measure([baseline, *fresh_cases, *old_cases], rounds(25, 5))
        expect(len(manager.requests("Review")) == 2, "a timed hook called the manager")
    rows: list[Row] = []
    labels = ("PostToolUse Bash", "review cache hit", "PreToolUse", "status", "status --json")
    for label, f, o in zip(labels, fresh_cases, old_cases, strict=True):
        rows.append(
            timed_row(BENCH, f"3 {label}: old loop vs fresh", samples, o.name, f.name, limit=LIMIT)
        )
    for label, f in zip(labels, fresh_cases, strict=True):
        rows.append(timed_row(BENCH, f"3 {label}, fresh loop", samples, f.name, baseline.name))
    notes = [
        f"old loop: {TASKS} tasks, {EVENTS} events ({ledger_mib:.1f} MiB), state.json {state_kib:.0f} KiB",
        f"interpreter {Path(python).name}",
    ]
    emit(rows, notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
