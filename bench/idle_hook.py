"""Target 1: a hook with nothing to do, through the real launcher.

1a  no loop anywhere (no active/ directory): the launcher answers without starting Python.
    Baseline: `bash -c '[ -f <missing file> ]'`. Target: median <= 1.2x.
1b  loops active elsewhere (a marker for another worktree in active/): Python starts, the gate
    finds no loop for this worktree. Baseline: `<python> -c pass`. Target: median <= 1.5x.

Rows without a target break the figures down: no env hop, no launcher, `python -S`, and the
prototypes in bench/prototypes/ that measure proposed fixes (a launcher without subshells
before `exec`, a gate with the fewest imports).

    python bench/idle_hook.py [--clean-site] [--json FILE]

`--clean-site` repeats 1b with a venv that skips the base interpreter's site-packages `.pth`
startup hooks, as a user's private venv would.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from benchlib import (
    BRIDGE,
    LAUNCHER,
    QUICK,
    Case,
    Row,
    build_repo,
    clean_site_python,
    emit,
    hook_argv,
    hook_env,
    hook_payload,
    measure,
    real_python,
    rounds,
    run,
    silent_ok,
    timed_row,
    workdir,
)

BENCH = "1 idle hook"
PROTOTYPES = Path(__file__).resolve().parent / "prototypes"
LEAN_LAUNCHER = PROTOTYPES / "lean-launcher"
MINIMAL_GATE = PROTOTYPES / "minimal_gate.py"
EVENTS = ("PostToolUse", "Stop", "PreToolUse")


def payload_for(event: str, repo: Path) -> bytes:
    extra: dict[str, Any] = (
        {"tool_name": "Bash", "tool_input": {"command": "ls"}} if event != "Stop" else {}
    )
    return hook_payload(event, repo, **extra)


def no_loop_anywhere(tmp: Path, repo: Path, python: str) -> list[Row]:
    home = tmp / "home-no-active"
    env = hook_env(home, python)
    # Proof that no Python starts: an interpreter that does not exist still answers silently.
    for event in EVENTS:
        proof = run(
            hook_argv(event),
            env={**env, "AUTOPILOT_CODEX_PYTHON": "/nonexistent/python"},
            stdin=payload_for(event, repo),
        )
        silent_ok(proof)
    empty_home = tmp / "home-empty-active"
    (empty_home / "active").mkdir(parents=True)
    missing = tmp / "no-such-file"
    stdin = payload_for("PostToolUse", repo)
    cases = [
        Case(
            "bash -c '[ -f missing ]'",
            ["bash", "-c", f"[ -f '{missing}' ]"],
            env,
            stdin,
            check=lambda p: None,
        )
    ]
    for event in EVENTS:
        cases.append(
            Case(
                f"launcher {event}",
                hook_argv(event),
                env,
                payload_for(event, repo),
                check=silent_ok,
            )
        )
    cases += [
        Case(
            "launcher PostToolUse, empty active/",
            hook_argv("PostToolUse"),
            hook_env(empty_home, python),
            stdin,
            check=silent_ok,
        ),
        Case(
            "bash launcher PostToolUse (no env hop)",
            ["bash", str(LAUNCHER), "hook", "PostToolUse", "--host", "claude"],
            env,
            stdin,
            check=silent_ok,
        ),
    ]
    samples = measure(cases, rounds(60, 8))
    base = cases[0].name
    rows = [
        timed_row(
            BENCH, f"1a {event}, no loop anywhere", samples, f"launcher {event}", base, limit=1.2
        )
        for event in EVENTS
    ]
    rows += [
        timed_row(BENCH, "1a PostToolUse, empty active/", samples, cases[4].name, base),
        timed_row(BENCH, "1a bash launcher (no env hop)", samples, cases[5].name, base),
    ]
    return rows


def loops_elsewhere(tmp: Path, repo: Path, python: str, label: str = "") -> list[Row]:
    home = tmp / f"home-other-loop{label.replace(' ', '-')}"
    active = home / "active"
    active.mkdir(parents=True, exist_ok=True)
    elsewhere = tmp / "elsewhere"
    marker = {"worktree": str(elsewhere), "session_id": "sess-elsewhere"}
    (active / "elsewhere-0123456789ab").write_text(json.dumps(marker) + "\n")
    env = hook_env(home, python)
    direct_env = {**env, "PYTHONPATH": str(BRIDGE)}
    stdin = payload_for("PostToolUse", repo)
    baseline = Case(f"python -c pass{label}", [python, "-c", "pass"], env, stdin)
    cases = [baseline]
    for event in EVENTS:
        cases.append(
            Case(
                f"launcher {event}{label}",
                hook_argv(event),
                env,
                payload_for(event, repo),
                check=silent_ok,
            )
        )
    direct = [python, "-m", "autopilot_codex", "hook", "PostToolUse", "--host", "claude"]
    context = [
        ("1b gate without launcher", direct, direct_env),
        ("1b lean launcher prototype", [str(LEAN_LAUNCHER), *direct[3:]], env),
        ("1b minimal gate prototype", [python, str(MINIMAL_GATE)], env),
        ("1b python -S -c pass", [python, "-S", "-c", "pass"], env),
    ]
    cases += [Case(name + label, argv, e, stdin, check=silent_ok) for name, argv, e in context]
    samples = measure(cases, rounds(40, 6))
    base = baseline.name
    rows = [
        timed_row(
            BENCH,
            f"1b {event}, loop elsewhere{label}",
            samples,
            f"launcher {event}{label}",
            base,
            limit=1.5,
        )
        for event in EVENTS
    ]
    rows += [timed_row(BENCH, name + label, samples, name + label, base) for name, _, _ in context]
    return rows


def launcher_overhead(tmp: Path, repo: Path) -> list[Row]:
    """What the launcher does before `exec`: with /bin/true as the interpreter."""
    home = tmp / "home-other-loop"
    true = shutil.which("true") or "/bin/true"
    env = hook_env(home, true)
    stdin = payload_for("PostToolUse", repo)
    cases = [
        Case("bash -c 'exec true'", ["bash", "-c", f"exec {true}"], env, stdin),
        Case("launcher, exec true", hook_argv("PostToolUse"), env, stdin),
        Case(
            "lean launcher prototype, exec true",
            [str(LEAN_LAUNCHER), "hook", "PostToolUse", "--host", "claude"],
            env,
            stdin,
        ),
    ]
    samples = measure(cases, rounds(60, 8))
    return [
        timed_row(BENCH, "launcher up to exec", samples, cases[1].name, cases[0].name),
        timed_row(
            BENCH, "lean launcher prototype up to exec", samples, cases[2].name, cases[0].name
        ),
    ]


def main() -> int:
    python = real_python()
    with workdir("idle") as tmp:
        repo = build_repo(tmp / "repo", 20)
        rows = no_loop_anywhere(tmp, repo, python)
        rows += loops_elsewhere(tmp, repo, python)
        rows += launcher_overhead(tmp, repo)
        if "--clean-site" in sys.argv:
            clean = clean_site_python(tmp, python)
            rows += loops_elsewhere(tmp, repo, clean, " [clean site]")
    emit(rows, [f"interpreter: {Path(python).name}; {'quick' if QUICK else 'full'} mode"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
