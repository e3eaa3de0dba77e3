"""Shared machinery of the benchmarks: interpreter, environment, repositories, fake manager,
interleaved timing and the result table.

Every timed figure is a ratio against a baseline measured in the same run: each round runs the
baseline and every case once, in a shuffled order, and the figures are medians over the rounds.
`BENCH_QUICK=1` cuts the number of rounds for a fast smoke run.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "bin" / "autopilot-codex"
BRIDGE = ROOT / "bridge"
for _path in (str(ROOT), str(BRIDGE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

QUICK = os.environ.get("BENCH_QUICK", "").strip() not in ("", "0")
SESSION = "sess-bench-1"
OTHER_SESSION = "sess-bench-2"
FAKE_KEY = "sk-bench-not-a-real-key-0000000000"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench Author",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench Committer",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def rounds(full: int, quick: int = 5) -> int:
    """The rounds of a timed bench: BENCH_ROUNDS=N sets them all, for runs to be repeated."""
    chosen = os.environ.get("BENCH_ROUNDS", "").strip()
    if chosen.isdigit() and int(chosen) > 0:
        return int(chosen)
    return quick if QUICK else full


# -- interpreter -------------------------------------------------------------------------------


def real_python() -> str:
    """The interpreter binary itself, never a version-manager shim (a shell script).

    `BENCH_PYTHON` overrides. A virtual environment's `python` is kept as it is: resolving its
    symlink would lose the environment's packages.
    """
    candidate = os.environ.get("BENCH_PYTHON", "").strip() or sys.executable
    with Path(candidate).open("rb") as handle:
        is_script = handle.read(2) == b"#!"
    if not is_script:
        return candidate
    out = subprocess.run(
        [candidate, "-c", "import sys; print(sys.executable)"],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def clean_site_python(where: Path, base: str) -> str:
    """A venv of `base` that sees base's packages through a plain path entry.

    Path lines of a `.pth` file are appended to sys.path without processing the `.pth` files
    found there, so the base interpreter's startup hooks (`import` lines in its site-packages)
    do not run: this is what a user's private venv starts like.
    """
    venv = where / "clean-venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    paths = subprocess.run(
        [
            base,
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib')); "
            "print(sysconfig.get_path('platlib'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    python = venv / "bin" / "python"
    site_dir = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site_dir, "bench-base-packages.pth").write_text("\n".join(dict.fromkeys(paths)) + "\n")
    return str(python)


# -- environment -------------------------------------------------------------------------------


def clean_environ() -> dict[str, str]:
    """This process's environment without anything that would steer the plugin or Python."""
    drop = ("AUTOPILOT_CODEX_", "OPENAI_", "CLAUDE", "PYTHON", "PLUGIN_DATA", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def hook_env(home: Path, python: str, base_url: str = "", **extra: str) -> dict[str, str]:
    env = clean_environ()
    env.update(GIT_ENV)
    env.update(
        AUTOPILOT_CODEX_HOME=str(home),
        AUTOPILOT_CODEX_PYTHON=python,
        HOME=str(home.parent / "user-home"),
        OPENAI_API_KEY=FAKE_KEY,
    )
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    env.update(extra)
    return env


@contextmanager
def workdir(prefix: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=f"autopilot-bench-{prefix}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- repositories ------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    env = {**clean_environ(), **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def file_text(index: int, lines: int = 12) -> str:
    body = [f"# module {index}"]
    body += [f"VALUE_{index}_{n} = {index * 31 + n}" for n in range(lines - 1)]
    return "\n".join(body) + "\n"


def build_repo(path: Path, files: int, *, lines: int = 12, per_dir: int = 100) -> Path:
    """A committed repository of `files` small Python files, `per_dir` to a directory."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for index in range(files):
        target = path / "src" / f"pkg{index // per_dir:04d}" / f"mod{index:06d}.py"
        if index % per_dir == 0:
            target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file_text(index, lines))
    (path / "README.md").write_text("# bench repository\n")
    # Files written in the same second as the index are "racily clean": git would re-read every
    # one of them on each diff, which no long-lived repository does. Date them an hour back.
    past = time.time() - 3600
    for written in (path / "src").rglob("*.py"):
        os.utime(written, (past, past))
    os.utime(path / "README.md", (past, past))
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def tracked_file(repo: Path, index: int, per_dir: int = 100) -> Path:
    return repo / "src" / f"pkg{index // per_dir:04d}" / f"mod{index:06d}.py"


def make_diff(repo: Path, lines: int, *, files: int = 6, tag: str = "edit") -> None:
    """Append `lines` new lines, spread over the first `files` tracked files."""
    per_file = lines // files
    for n in range(files):
        target = tracked_file(repo, n)
        extra = per_file + (lines - per_file * files if n == files - 1 else 0)
        added = "".join(f"{tag}_{n}_{k} = {k}  # added for the benchmark\n" for k in range(extra))
        target.write_text(target.read_text() + added)


# -- the fake manager --------------------------------------------------------------------------


@dataclass
class ManagerScript:
    """What the fake manager answers: a plan of `tasks` tasks, approvals, then verdicts."""

    tasks: int = 5
    # Tasks with several steps and criteria of realistic length, rather than the tests' stubs.
    rich: bool = False
    reviews: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)


def rich_task(n: int) -> dict[str, Any]:
    words = "the handler validates its input and reports a clear error to the caller"
    return {
        "id": f"T{n}",
        "title": f"implement part {n} of the feature with its tests",
        "files": [f"src/pkg{n % 50:04d}/mod{n:06d}.py", f"tests/test_part_{n}.py"],
        "steps": [f"step {k} of task {n}: {words}" for k in range(1, 4)],
        "acceptance": [f"criterion {k} of task {n}: {words}" for k in range(1, 4)],
        "tests": [f"pytest tests/test_part_{n}.py -k case{k}" for k in range(1, 3)],
    }


def rich_plan(tasks: int) -> dict[str, Any]:
    return {"summary": "a long plan", "tasks": [rich_task(n) for n in range(1, tasks + 1)]}


class FakeManager:
    """The test suite's fake OpenAI server, answering by schema, with usage that reflects the
    request: input tokens = prompt characters / 4, output tokens = answer characters / 4."""

    def __init__(self, script: ManagerScript | None = None) -> None:
        from tests.fakes.openai_server import FakeOpenAI

        self.script = script or ManagerScript()
        self.server = FakeOpenAI(responder=self._respond)
        self.base_url = self.server.base_url

    def _respond(self, request: Any) -> Any:
        from tests.conftest import plan_body, review_body, verdict_body
        from tests.fakes.openai_server import Reply

        schema = request.schema_name
        if schema == "Plan":
            body = (
                rich_plan(self.script.tasks) if self.script.rich else plan_body(self.script.tasks)
            )
        elif schema == "Review":
            body = self.script.reviews.pop(0) if self.script.reviews else review_body("approve")
        elif schema == "Verdict":
            body = self.script.verdicts.pop(0) if self.script.verdicts else verdict_body()
        elif schema == "Judgement":  # a Stop's review and verdict in one call
            review = self.script.reviews.pop(0) if self.script.reviews else review_body("approve")
            verdict = self.script.verdicts.pop(0) if self.script.verdicts else verdict_body()
            body = {"review": review, "verdict": verdict}
        else:
            return None
        text = json.dumps(body)
        return Reply(
            body=body,
            input_tokens=max(1, len(request.prompt_text) // 4),
            output_tokens=max(1, len(text) // 4),
        )

    def requests(self, schema: str | None = None) -> list[Any]:
        return [r for r in self.server.requests_for(schema=schema) if r.api != "other"]

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> FakeManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- the plugin ---------------------------------------------------------------------------------


def launcher(*args: str) -> list[str]:
    return [str(LAUNCHER), *args]


def hook_argv(event: str) -> list[str]:
    """A hook exactly as hooks/hooks.json runs it: `/bin/sh <launcher> hook <event> --host claude`
    (bash only when the launcher starts it)."""
    return ["/bin/sh", *launcher("hook", event, "--host", "claude")]


def hook_payload(event: str, cwd: Path, session: str = SESSION, **extra: Any) -> bytes:
    from tests.conftest import payload

    return json.dumps(payload(event, cwd, session, **extra)).encode()


def edit_hook_payload(cwd: Path, name: str, session: str = SESSION) -> bytes:
    from tests.conftest import edit_payload

    return json.dumps(edit_payload(cwd, name, session)).encode()


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: bytes = b"",
    cwd: Path | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(list(argv), input=stdin, capture_output=True, env=dict(env), cwd=cwd)
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} exited {proc.returncode}: {proc.stdout.decode()} {proc.stderr.decode()}"
        )
    return proc


def plan_loop(repo: Path, env: Mapping[str, str], *extra: str) -> str:
    """Start a loop through the real launcher and CLI, owned by SESSION."""
    proc = run(
        launcher("-C", str(repo), "plan", "--session-id", SESSION, *extra, "bench", "goal"),
        env=env,
    )
    return proc.stdout.decode()


def loop_dir(repo: Path, home: Path) -> Path:
    from autopilot_codex.paths import project_dir

    return project_dir(repo, home)


def settle(repo: Path, home: Path, timeout: float = 120.0) -> None:
    """Wait until the loop has no manager call in flight (a background review finished)."""
    path = loop_dir(repo, home) / "state.json"
    deadline = time.monotonic() + timeout
    while True:
        try:
            busy = json.loads(path.read_text()).get("inflight") is not None
        except (OSError, ValueError):
            busy = False
        if not busy:
            return
        expect(time.monotonic() < deadline, "a background review never finished")
        time.sleep(0.02)


def marker_path(repo: Path, home: Path) -> Path:
    from autopilot_codex.paths import active_marker

    return active_marker(repo, home)


def last_event(repo: Path, home: Path) -> str:
    path = loop_dir(repo, home) / "events.jsonl"
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 8192))
        tail = handle.read().splitlines()
    return str(json.loads(tail[-1])["event"])


def vouch(state_path: Path, text: str) -> None:
    """Write a scenario's state.json and record it in the bridge's witness, as the bridge's own
    write would be: a state written by anything else stops the loop (tamper evidence)."""
    from autopilot_codex import witness, witness_key

    # <home>/projects/<key>/state.json: the witness is sealed with that home's key.
    key = witness_key.load(state_path.parents[2]).secret
    path = state_path.with_name("witness.json")
    seen = witness.read(path, key) or witness.Witness()
    vouched = seen.evolve(states=(witness.digest(text),), last=text, serial=seen.serial + 1)
    path.write_text(vouched.to_json(key))
    state_path.write_text(text)


class Snapshot:
    """A saved copy of a loop's state.json (with the bridge's witness of it and its ledger) and
    active marker, restored before a timed run."""

    def __init__(self, repo: Path, home: Path) -> None:
        self.state_path = loop_dir(repo, home) / "state.json"
        self.witness_path = self.state_path.with_name("witness.json")
        self.marker = marker_path(repo, home)
        self.state = self.state_path.read_bytes()
        self.witness = self.witness_path.read_bytes() if self.witness_path.exists() else None
        self.marker_bytes = self.marker.read_bytes() if self.marker.exists() else None
        # The sealed ledger too: a witness put back over a longer ledger reads as a replay.
        self.ledger_path = self.state_path.with_name("events.jsonl")
        self.ledger = self.ledger_path.read_bytes() if self.ledger_path.exists() else None

    def restore(self) -> None:
        self.state_path.write_bytes(self.state)
        if self.witness is not None:
            self.witness_path.write_bytes(self.witness)
        if self.ledger is not None:
            self.ledger_path.write_bytes(self.ledger)
        if self.marker_bytes is None:
            self.marker.unlink(missing_ok=True)
        else:
            self.marker.write_bytes(self.marker_bytes)


# -- timing ------------------------------------------------------------------------------------


@dataclass
class Case:
    """One command to time. `setup` runs before and `check` after each run, outside the timing."""

    name: str
    argv: Sequence[str]
    env: Mapping[str, str] | None = None
    stdin: bytes = b""
    cwd: Path | None = None
    setup: Callable[[], None] | None = None
    check: Callable[[subprocess.CompletedProcess[bytes]], None] | None = None


@dataclass
class Samples:
    """Per case: wall seconds (perf_counter around subprocess.run) and the CPU seconds (user +
    system) its process tree used, one entry per round."""

    wall: dict[str, list[float]]
    cpu: dict[str, list[float]]

    def __getitem__(self, name: str) -> list[float]:
        return self.wall[name]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_case(case: Case) -> tuple[float, float]:
    if case.setup is not None:
        case.setup()
    env = dict(case.env) if case.env is not None else None
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(
        list(case.argv), input=case.stdin, capture_output=True, env=env, cwd=case.cwd
    )
    elapsed = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if case.check is not None:
        case.check(proc)
    elif proc.returncode != 0:
        raise RuntimeError(f"{case.name}: exit {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed, cpu


def measure(cases: Sequence[Case], n_rounds: int, *, warmup: int = 2, seed: int = 7) -> Samples:
    """Interleaved runs: every round times each case once, in a fresh random order."""
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError("case names must be unique")
    for case in cases:
        for _ in range(warmup):
            time_case(case)
    rng = random.Random(seed)
    samples = Samples({n: [] for n in names}, {n: [] for n in names})
    for _ in range(n_rounds):
        order = list(cases)
        rng.shuffle(order)
        for case in order:
            wall, cpu = time_case(case)
            samples.wall[case.name].append(wall)
            samples.cpu[case.name].append(cpu)
    return samples


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise RuntimeError(message)


def silent_ok(proc: subprocess.CompletedProcess[bytes]) -> None:
    expect(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr.decode()[-500:]}")
    expect(not proc.stdout.strip(), f"unexpected answer: {proc.stdout.decode()[:300]}")
    expect(not proc.stderr.strip(), f"unexpected stderr: {proc.stderr.decode()[:300]}")


# -- results -----------------------------------------------------------------------------------


@dataclass
class Row:
    bench: str
    figure: str
    value: float
    unit: str = "ms"
    baseline: str = ""
    baseline_value: float | None = None
    ratio: float | None = None
    target: str = ""
    ok: bool | None = None
    note: str = ""
    # The same comparison by CPU time (user + system of the process tree): steadier than wall
    # time on a loaded machine, blind to waiting (disk sync, network).
    cpu_ratio: float | None = None


def timed_row(
    bench: str,
    figure: str,
    samples: Samples,
    case: str,
    baseline: str,
    *,
    limit: float | None = None,
    note: str = "",
) -> Row:
    value = median(samples.wall[case]) * 1000
    base = median(samples.wall[baseline]) * 1000
    ratio = value / base
    cpu_ratio = median(samples.cpu[case]) / max(median(samples.cpu[baseline]), 1e-9)
    return Row(
        bench,
        figure,
        value,
        "ms",
        baseline,
        base,
        ratio,
        f"<= {limit:g}x" if limit is not None else "",
        (ratio <= limit) if limit is not None else None,
        note,
        cpu_ratio,
    )


def format_rows(rows: Sequence[Row]) -> str:
    header = ("bench", "figure", "median", "baseline", "base", "ratio", "cpu ratio", "target", "ok")
    table = [header]
    for r in rows:
        value = (
            f"{r.value:.2f} {r.unit}" if r.unit in ("ms", "s") else f"{r.value:g} {r.unit}".strip()
        )
        base = f"{r.baseline_value:.2f}" if r.baseline_value is not None else ""
        ratio = f"{r.ratio:.2f}x" if r.ratio is not None else ""
        cpu = f"{r.cpu_ratio:.2f}x" if r.cpu_ratio is not None else ""
        ok = "" if r.ok is None else ("PASS" if r.ok else "MISS")
        table.append((r.bench, r.figure, value, r.baseline, base, ratio, cpu, r.target, ok))
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def emit(rows: Sequence[Row], notes: Sequence[str] = ()) -> None:
    """Print the table; with `--json FILE` (or BENCH_JSON) also write the rows there."""
    print(format_rows(rows))
    for note in notes:
        print(f"note: {note}")
    target = os.environ.get("BENCH_JSON", "")
    if "--json" in sys.argv[:-1]:
        target = sys.argv[sys.argv.index("--json") + 1]
    if target:
        data = {"rows": [asdict(r) for r in rows], "notes": list(notes)}
        Path(target).write_text(json.dumps(data, indent=2) + "\n")


# -- a running loop, set up through the real CLI and hooks ---------------------------------------


@dataclass
class ActiveLoop:
    repo: Path
    home: Path
    env: dict[str, str]
    manager: FakeManager

    @property
    def state_path(self) -> Path:
        return loop_dir(self.repo, self.home) / "state.json"

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.state_path.read_text())
        return data

    def write_state(self, data: dict[str, Any]) -> None:
        vouch(self.state_path, json.dumps(data, indent=2) + "\n")

    def hook(self, event: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        """A setup hook; an edit's background review is waited for, so the setup is done."""
        proc = run(hook_argv(event), env=self.env, stdin=stdin)
        settle(self.repo, self.home)
        return proc

    def reviews(self) -> int:
        return len(self.manager.requests("Review"))

    def verdicts(self) -> int:
        return len(self.manager.requests("Verdict"))


def start_loop(
    tmp: Path,
    python: str,
    manager: FakeManager,
    *,
    files: int,
    name: str = "repo",
    home: Path | None = None,
    plan_args: Sequence[str] = (),
) -> ActiveLoop:
    repo = build_repo(tmp / name, files)
    home = home or tmp / "state-home"
    env = hook_env(home, python, manager.base_url)
    plan_loop(repo, env, *plan_args)
    loop = ActiveLoop(repo, home, env, manager)
    expect(loop.state()["status"] == "running", "the loop did not start")
    return loop


def task(n: int) -> dict[str, object]:
    """Task `T<n>` of a plan whose tasks stand alone (write `T<n>.txt`): the lanes' benches."""
    return {
        "id": f"T{n}",
        "title": f"write T{n}.txt",
        "files": [f"T{n}.txt"],
        "steps": [f"write T{n}.txt"],
        "acceptance": [f"T{n}.txt exists"],
        "tests": [],
        "depends_on": [],
    }
