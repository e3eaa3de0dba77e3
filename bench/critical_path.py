"""How much of the manager's latency the implementer waits for: the real Claude Code CLI makes
N edits and ends its turn once, with a fake manager that takes L seconds per answer, in review
mode `edit` and with reviews `off`.

    python bench/critical_path.py [--json FILE]

The figure is (wall(edit) - wall(off)) / L: how many manager latencies the reviews add to the
session; the same difference of the sessions' Stop phases (from the implementer's last model
request to the end) is printed too: it leaves out the edits, whose time on a shared machine
varies by more than a latency between two identical sessions. Reviewing in the background, a review still out at the Stop of the diff it judges is
waited for; one of an older diff is cancelled and the Stop reviews the final diff in its
verdict's call (schema Judgement), so the Stop costs one latency like a Stop without reviews.
With the edit hook waiting for every review it was about N. Also printed: the manager's
requests per scenario.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlib import QUICK, ROOT, Row, emit, hook_env, real_python

BENCH = "critical_path"
LATENCY_S = 3.0
EDITS = (5,) if QUICK else (5, 20)
# Sessions on a shared machine vary by seconds: the figure is the median of same-run pairs.
PAIRS = 1 if QUICK else 3
TARGET = 1.1


def _responder(request: Any) -> Any:
    """Every review approves and every verdict is `done`, each after LATENCY_S; a Stop's
    folded review and verdict is one answer after LATENCY_S too."""
    # `tests` is importable once benchlib has put the checkout on sys.path.
    from tests.conftest import review_body, verdict_body
    from tests.fakes.openai_server import Reply

    if request.schema_name == "Review":
        return Reply(body=review_body("approve"), delay=LATENCY_S)
    if request.schema_name == "Verdict":
        return Reply(body=verdict_body("done"), delay=LATENCY_S)
    if request.schema_name == "Judgement":
        body = {"review": review_body("approve"), "verdict": verdict_body("done")}
        return Reply(body=body, delay=LATENCY_S)
    return None


@dataclass(frozen=True)
class Session:
    wall: float
    # From the implementer's last model request to the session's end: the Stop (its hook and
    # the manager calls it waits for) and the CLI's exit, without the edits' noise.
    stop_phase: float
    requests: dict[str, int]


def scenario(claude: Path, tmp: Path, edits: int, mode: str, pair: int = 0) -> Session:
    """One session: its wall seconds, its Stop phase and the manager requests, by schema."""
    from tests.conftest import plan_body
    from tests.e2e.claude_cli import make_git_repo, run_claude
    from tests.e2e.fake_anthropic import FakeAnthropic, Text, ToolUse
    from tests.fakes.openai_server import FakeOpenAI

    repo = make_git_repo(tmp / f"repo-{mode}-{edits}-{pair}")
    home = tmp / f"home-{mode}-{edits}-{pair}"
    env = hook_env(home / "state", real_python())
    with FakeOpenAI() as manager, FakeAnthropic(workdir=repo) as anthropic:
        env["OPENAI_BASE_URL"] = manager.base_url
        manager.enqueue(plan_body(1), schema="Plan")
        manager.responder = _responder
        _plan(repo, env, mode)
        anthropic.script = [
            [ToolUse("Write", {"file_path": "{workdir}/" + f"f{i}.txt", "content": f"{i}\n"})]
            for i in range(edits)
        ] + [[Text("All written.")]]
        run = run_claude(
            claude,
            workdir=repo,
            prompt="Write the files.",
            plugin_dir=ROOT,
            anthropic_url=anthropic.url,
            home=home / "user",
            extra_env={k: v for k, v in env.items() if k.startswith(("AUTOPILOT", "OPENAI"))},
            timeout=600,
        )
        ended = time.time()
        if not run.ok:
            raise RuntimeError(run.describe())
        counts: dict[str, int] = {}
        for request in manager.requests:
            name = str(request.schema_name)
            counts[name] = counts.get(name, 0) + 1
        last = max(r.time for r in anthropic.requests if r.main)
    return Session(run.wall_time, ended - last, counts)


def _plan(repo: Path, env: dict[str, str], mode: str) -> None:
    import subprocess

    launcher = ROOT / "bin" / "autopilot-codex"
    subprocess.run(
        [str(launcher), "-C", str(repo), "plan", "--review", mode, "write", "the", "files"],
        env=env,
        check=True,
        capture_output=True,
    )


def main() -> int:
    from tests.e2e.claude_cli import ClaudeInstallError, ensure_claude

    try:
        claude = ensure_claude()
    except ClaudeInstallError as exc:
        print(f"critical_path: the pinned Claude Code CLI is unavailable: {exc}", file=sys.stderr)
        return 1
    rows: list[Row] = []
    notes: list[str] = [f"fake manager latency L = {LATENCY_S:g} s per answer"]
    with tempfile.TemporaryDirectory(prefix="autopilot-bench-critical-") as name:
        tmp = Path(name)
        for edits in EDITS:
            walls, stops = [], []
            for pair in range(PAIRS):
                runs: dict[str, Session] = {}
                # Each pair back to back, the order alternating: a machine that slows down
                # or speeds up during the run favours neither mode.
                for mode in ("off", "edit") if pair % 2 == 0 else ("edit", "off"):
                    runs[mode] = got = scenario(claude, tmp, edits, mode, pair)
                    notes.append(
                        f"N={edits} pair {pair + 1} {mode}: {got.wall:.1f} s, Stop phase "
                        f"{got.stop_phase:.1f} s, manager requests {got.requests}"
                    )
                walls.append((runs["edit"].wall - runs["off"].wall) / LATENCY_S)
                stops.append((runs["edit"].stop_phase - runs["off"].stop_phase) / LATENCY_S)
            for label, ratios in (("wall", walls), ("Stop phase", stops)):
                ratio = statistics.median(ratios)
                notes.append(f"N={edits} {label}: pairs {', '.join(f'{r:.2f}' for r in ratios)} L")
                rows.append(
                    Row(
                        BENCH,
                        f"N={edits} edits + 1 Stop: ({label}(edit) - {label}(off)) / L, "
                        f"median of {PAIRS}",
                        round(ratio, 2),
                        "L",
                        target=f"<= {TARGET:g}",
                        ok=ratio <= TARGET,
                    )
                )
    emit(rows, notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
