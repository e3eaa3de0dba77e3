"""Target 4: manager economy. Every figure here is a count, exact and noise-free.

4a  A scripted loop (5 tasks, 40 edits, 10 stops, 10 shell commands of which 5 commits) is
    driven through the hook entry point (`autopilot_codex.__main__.run`, in-process) against
    the fake manager, once per review mode (edit, commit, stop). Requests must be exactly
    plan + distinct diffs reviewed + verdicts, where the bench works out the distinct diffs
    itself from what it wrote. Prompt tokens = prompt characters / 4; dollars from the pricing
    module with the default model (output tokens = answer characters / 4).
4b  No prompt may exceed the configured cap (AUTOPILOT_CODEX_PROMPT_CHARS), checked with a
    2 MB diff in one file, a 2 MB diff over 500 files and a 50,000-file repository, under the
    default cap and a small one.

    python bench/economy.py [--json FILE]
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import (
    FAKE_KEY,
    GIT_ENV,
    SESSION,
    FakeManager,
    ManagerScript,
    Row,
    build_repo,
    emit,
    expect,
    git,
    make_diff,
    settle,
    tracked_file,
    workdir,
)

BENCH = "4 economy"
TASKS = 5
EDITS_PER_TASK = 8
MODES = ("edit", "commit", "stop")
SMALL_CAP = 8_000


@contextlib.contextmanager
def plugin_env(home: Path, base_url: str, **extra: str) -> Iterator[None]:
    """This process's environment as a hook would see it, restored afterwards."""
    saved = dict(os.environ)
    for key in list(os.environ):
        if key.startswith(("AUTOPILOT_CODEX_", "OPENAI_", "CLAUDE")):
            del os.environ[key]
    os.environ.update(GIT_ENV)
    os.environ.update(
        AUTOPILOT_CODEX_HOME=str(home),
        OPENAI_API_KEY=FAKE_KEY,
        OPENAI_BASE_URL=base_url,
        **extra,
    )
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def hook(event: str, data: dict[str, Any]) -> str:
    """`python -m autopilot_codex hook <event>`, run in this process: the module's own entry
    point with its argv, stdin and stdout swapped."""
    from autopilot_codex.__main__ import run

    argv, stdin = sys.argv, sys.stdin
    sys.argv = ["autopilot-codex", "hook", event, "--host", "claude"]
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(data).encode()))
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            code = run()
    finally:
        sys.argv, sys.stdin = argv, stdin
    expect(code == 0, f"{event} hook exited {code}")
    if event == "PostToolUse":
        # Reviews run in the background: wait, so each diff the script makes is reviewed as
        # the tally expects (a real session would coalesce some of them).
        settle(Path(data["cwd"]), Path(os.environ["AUTOPILOT_CODEX_HOME"]))
    return out.getvalue()


def plan(repo: Path, mode: str) -> None:
    from autopilot_codex.cli import main

    argv = ["-C", str(repo), "plan", "--session-id", SESSION, "--review", mode, "the feature"]
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    expect(code == 0, f"plan exited {code}")


def payload(event: str, repo: Path, **extra: Any) -> dict[str, Any]:
    from tests.conftest import payload as make

    return make(event, repo, SESSION, **extra)


def edit(repo: Path, name: str) -> dict[str, Any]:
    from tests.conftest import edit_payload

    return edit_payload(repo, name, SESSION)


def shell(repo: Path, command: str) -> dict[str, Any]:
    return payload("PostToolUse", repo, tool_name="Bash", tool_input={"command": command})


# -- 4a: the scripted loop --------------------------------------------------------------------


@dataclass
class Tally:
    """What the bench itself expects the manager to be asked, from what it did."""

    mode: str
    reviewed: set[tuple[int, frozenset[tuple[str, str]]]] = field(default_factory=set)
    reviews: int = 0
    verdicts: int = 0
    # Stops whose diff was reviewed in the verdict's call (issue 26): one request for two.
    folded: int = 0
    blocks: int = 0
    last_head_reviewed: str = ""

    def review_point(self, task: int, written: dict[str, str]) -> bool:
        """True when this diff was not reviewed before: it is reviewed now."""
        key = (task, frozenset(written.items()))
        if key in self.reviewed:
            return False
        self.reviewed.add(key)
        self.reviews += 1
        return True


def verdict_script() -> list[dict[str, Any]]:
    from tests.conftest import verdict_body

    script = []
    for task in range(1, TASKS + 1):
        script.append(verdict_body("continue", done=False))
        script.append(
            verdict_body("done") if task == TASKS else verdict_body("continue", done=True)
        )
    return script


def scripted_loop(repo: Path, mode: str, tally: Tally) -> list[str]:  # noqa: C901 - one script
    """5 tasks x (8 edits, 2 shell commands, 2 stops). Returns the hooks' answers."""
    answers = []
    for task in range(1, TASKS + 1):
        written: dict[str, str] = {}
        new_file = f"feature/part{task}.py"
        old_file = str(tracked_file(repo, task).relative_to(repo))
        base_text = (repo / old_file).read_text()
        for step in range(1, EDITS_PER_TASK + 1):
            if step <= 4:
                name = new_file
                blocks = min(step, 3)  # step 4 writes step 3's content again: the same diff
                text = "".join(f"def part_{task}_{b}():\n    return {b}\n\n" for b in range(blocks))
            else:
                name = old_file
                blocks = min(step - 4, 3)
                text = base_text + "".join(f"EXTRA_{task}_{b} = {b}\n" for b in range(blocks))
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            written[name] = text
            answers.append(hook("PostToolUse", edit(repo, name)))
            if mode == "edit":
                tally.review_point(task, written)
            if step == 4:
                answers.append(hook("PostToolUse", shell(repo, "pytest -q")))
                answers.append(stop(repo, mode, task, written, tally))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"feat: task {task}")
        answers.append(hook("PostToolUse", shell(repo, f"git commit -m 'feat: task {task}'")))
        if mode == "commit":
            tally.review_point(task, written)
        answers.append(stop(repo, mode, task, written, tally))
    return answers


def stop(repo: Path, mode: str, task: int, written: dict[str, str], tally: Tally) -> str:
    if mode == "stop" and tally.review_point(task, written):
        tally.folded += 1
    tally.verdicts += 1
    answer = hook("Stop", payload("Stop", repo))
    if '"decision": "block"' in answer:
        tally.blocks += 1
    return answer


@dataclass
class Spend:
    requests: dict[str, int]
    prompt_tokens: int
    output_tokens: int
    usd: float
    max_prompt_chars: int


def spend(manager: FakeManager) -> Spend:
    from autopilot_codex.config import Config
    from autopilot_codex.manager.pricing import Usage, cost_usd, price_for

    price = price_for(Config().model)
    counts: dict[str, int] = {}
    prompt_tokens = output_tokens = max_chars = 0
    usd = 0.0
    for request in manager.requests():
        counts[request.schema_name] = counts.get(request.schema_name, 0) + 1
        chars = prompt_chars(request)
        max_chars = max(max_chars, chars)
        tokens_in = len(request.prompt_text) // 4
        tokens_out = answer_tokens(request.schema_name)
        prompt_tokens += tokens_in
        output_tokens += tokens_out
        usd += cost_usd(Usage(input_tokens=tokens_in, output_tokens=tokens_out), price)
    return Spend(counts, prompt_tokens, output_tokens, usd, max_chars)


def answer_tokens(schema: str) -> int:
    from tests.conftest import plan_body, review_body, verdict_body

    bodies: dict[str, Any] = {"Plan": plan_body(TASKS), "Review": review_body()}
    bodies.update(Verdict=verdict_body(), Judgement={"review": review_body(), "verdict": verdict_body()})
    body = bodies[schema]
    return len(json.dumps(body)) // 4


def prompt_chars(request: Any) -> int:
    """What the bridge caps: instructions + input (Responses API) or all message contents."""
    body = request.body or {}
    if "instructions" in body:
        return len(str(body.get("instructions") or "")) + len(str(body.get("input") or ""))
    return sum(len(str(m.get("content") or "")) for m in body.get("messages", []))


def run_mode(tmp: Path, mode: str) -> tuple[Tally, Spend, dict[str, Any]]:
    home = tmp / f"home-{mode}"
    repo = build_repo(tmp / f"repo-{mode}", 300)
    script = ManagerScript(tasks=TASKS, verdicts=verdict_script())
    with (
        FakeManager(script) as manager,
        plugin_env(home, manager.base_url, AUTOPILOT_CODEX_REVIEW=mode),
    ):
        plan(repo, mode)
        tally = Tally(mode)
        scripted_loop(repo, mode, tally)
        from autopilot_codex.paths import project_dir

        state = json.loads((project_dir(repo, home) / "state.json").read_text())
        return tally, spend(manager), state


def economy(tmp: Path) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    table = [
        "mode    requests (plan/review/verdict/both)  expected  prompt tokens  output tokens  "
        "USD total  USD per task  USD by the bridge"
    ]
    for mode in MODES:
        tally, used, state = run_mode(tmp, mode)
        expected = 1 + tally.reviews + tally.verdicts - tally.folded
        total = sum(used.requests.values())
        expect(state["status"] == "done", f"{mode}: the loop ended {state['status']}")
        # The done verdict ends the goal: every planned task counts as completed.
        completed = TASKS if state["status"] == "done" else len(state["autopilot"]["completed_tasks"])
        rows.append(
            Row(
                BENCH,
                f"4a {mode}: manager requests",
                total,
                "req",
                "plan+distinct diffs+verdicts-folded",
                expected,
                total / expected,
                f"= {expected}",
                total == expected,
            )
        )
        rows.append(
            Row(
                BENCH,
                f"4a {mode}: prompt tokens per completed task",
                used.prompt_tokens / completed,
                "tok",
            )
        )
        rows.append(
            Row(BENCH, f"4a {mode}: USD per completed task", round(used.usd / completed, 5), "USD")
        )
        kinds = ("Plan", "Review", "Verdict", "Judgement")
        split = "/".join(str(used.requests.get(k, 0)) for k in kinds)
        table.append(
            f"{mode:7} {total:3d} ({split:>11})                 {expected:4d}      {used.prompt_tokens:9d}"
            f"  {used.output_tokens:13d}  {used.usd:9.4f}  {used.usd / completed:12.5f}"
            f"  {state['budget_used_usd']:17.4f}"
        )
    return rows, table


# -- 4b: the prompt cap -------------------------------------------------------------------------


def big_one_file(repo: Path) -> None:
    lines = [f"LINE_{n:07d} = 'a line of a two megabyte change'\n" for n in range(2 * 2**20 // 44)]
    tracked_file(repo, 0).write_text("".join(lines))


def big_many_files(repo: Path) -> None:
    for index in range(500):
        path = tracked_file(repo, index)
        extra = "".join(f"CHANGE_{index}_{n:04d} = 'part of a 2 MB change'\n" for n in range(105))
        path.write_text(path.read_text() + extra)


def cap_case(tmp: Path, label: str, files: int, change: Any, cap: int | None) -> tuple[Row, Row]:
    name = f"{label}-{cap or 'default'}".replace(" ", "-").replace(",", "")
    home = tmp / f"home-{name}"
    repo = tmp / f"repo-{files}"
    if not (repo / ".git").exists():
        build_repo(repo, files)
    else:
        git(repo, "checkout", "-q", "--", ".")
        git(repo, "clean", "-qfd")
    extra = {"AUTOPILOT_CODEX_PROMPT_CHARS": str(cap)} if cap else {}
    from autopilot_codex.config import Config

    limit = cap or Config().prompt_chars
    with (
        FakeManager() as manager,
        plugin_env(home, manager.base_url, AUTOPILOT_CODEX_REVIEW="edit", **extra),
    ):
        plan(repo, "edit")
        if change is not None:
            change(repo)
        start = time.perf_counter()
        hook("PostToolUse", edit(repo, "src/pkg0000/mod000000.py"))
        review_ms = (time.perf_counter() - start) * 1000
        hook("Stop", payload("Stop", repo))
        used = spend(manager)
        expect(used.requests == {"Plan": 1, "Review": 1, "Verdict": 1}, f"{name}: {used.requests}")
    figure = f"4b {label}, cap {limit}"
    return (
        Row(
            BENCH,
            f"{figure}: largest prompt",
            used.max_prompt_chars,
            "chars",
            "cap",
            limit,
            used.max_prompt_chars / limit,
            f"<= {limit}",
            used.max_prompt_chars <= limit,
        ),
        Row(BENCH, f"{figure}: in-process review hook", review_ms, "ms"),
    )


def caps(tmp: Path) -> list[Row]:
    rows: list[Row] = []
    for cap in (None, SMALL_CAP):
        rows += cap_case(tmp, "2 MB diff in one file", 300, big_one_file, cap)
        rows += cap_case(tmp, "2 MB diff over 500 files", 1_000, big_many_files, cap)
        rows += cap_case(tmp, "50000 files, 300-line diff", 50_000, small_diff, cap)
    return rows


def small_diff(repo: Path) -> None:
    make_diff(repo, 300)


def main() -> int:
    with workdir("economy") as tmp:
        rows, table = economy(tmp)
        rows += caps(tmp)
    emit(rows, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
