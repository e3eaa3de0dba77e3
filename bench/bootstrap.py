"""Target 5: first use. `bin/autopilot-codex bootstrap` creates the plugin's private Python
environment (CLAUDE_PLUGIN_DATA pointing at a temp dir, AUTOPILOT_CODEX_PYTHON unset) and
installs the bridge's requirements from the package index. Timed once with `uv` on PATH and
once without it (venv + pip), each with empty download caches. Slow, needs the network.

Then "second use adds nothing measurable": with the environment in place,
- `bootstrap` again is a no-op check (against `bash -c true`);
- `status` through the launcher finding the venv vs the same interpreter given explicitly
  (AUTOPILOT_CODEX_PYTHON): the ratio should be 1.

PATH holds only links to the tools the launcher uses (and `uv` for the uv run), so no other
`uv` or `python3` is found. If `uv` is not installed it is installed with pip into the temp dir
for this run only.

    python bench/bootstrap.py [--json FILE]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from benchlib import (
    Case,
    Row,
    build_repo,
    clean_environ,
    emit,
    expect,
    launcher,
    measure,
    real_python,
    rounds,
    timed_row,
    workdir,
)

BENCH = "5 bootstrap"
SHELL_TOOLS = ("bash", "sh", "cat", "cksum", "cut", "mkdir", "rmdir", "rm", "ln", "mv", "sleep")
TOOLS = (*SHELL_TOOLS, "readlink", "ps", "uname", "dirname", "git", "env")
OPTIONAL_TOOLS = ("flock",)  # the setup's lock: flock where the system has it (not on macOS)


def tool_dir(tmp: Path, python: str) -> Path:
    """A directory of links to exactly the commands the launcher may run."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        expect(found is not None, f"{tool} is not installed")
        (bin_dir / tool).symlink_to(found)  # type: ignore[arg-type]
    for tool in OPTIONAL_TOOLS:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    (bin_dir / "python3").symlink_to(python)
    return bin_dir


def uv_dir(tmp: Path, python: str) -> tuple[Path, str]:
    found = shutil.which("uv")
    where = tmp / "bin-uv"
    where.mkdir()
    if found:
        (where / "uv").symlink_to(found)
        return where, "installed uv"
    target = tmp / "uv-tool"
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
            str(target),
            "uv",
        ],
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    (where / "uv").symlink_to(target / "bin" / "uv")
    return where, "uv installed with pip into the temp dir for this run"


def first_use(tmp: Path, name: str, path: str) -> tuple[float, Path, dict[str, str]]:
    data = tmp / f"data-{name}"
    env = clean_environ()
    for key in list(env):
        if key.startswith(("UV_", "PIP_FIND_LINKS", "PIP_NO_INDEX")):
            del env[key]  # a local wheel store would not be there on a user's machine
    env.update(
        PATH=path,
        HOME=str(tmp / f"home-{name}"),
        CLAUDE_PLUGIN_DATA=str(data),
        AUTOPILOT_CODEX_HOME=str(tmp / f"state-{name}"),
        UV_CACHE_DIR=str(tmp / f"cache-uv-{name}"),
        PIP_CACHE_DIR=str(tmp / f"cache-pip-{name}"),
    )
    start = time.perf_counter()
    proc = subprocess.run(launcher("bootstrap"), capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    expect(proc.returncode == 0, f"bootstrap ({name}) failed: {proc.stderr.decode()[-800:]}")
    venv_python = data / "venv" / "bin" / "python"
    check = subprocess.run(
        [str(venv_python), "-c", "import pydantic, git, openai"], capture_output=True, env=env
    )
    expect(check.returncode == 0, f"the {name} venv cannot import the requirements")
    expect((data / "venv" / ".autopilot-codex-stamp").exists(), "no stamp written")
    return elapsed, venv_python, env


def second_use(tmp: Path, name: str, venv_python: Path, env: dict[str, str]) -> list[Row]:
    repo = tmp / "repo"
    if not repo.exists():
        build_repo(repo, 20)
    explicit = {**env, "AUTOPILOT_CODEX_PYTHON": str(venv_python)}
    status = launcher("-C", str(repo), "status")
    cases = [
        Case(f"bash -c true ({name})", ["bash", "-c", "true"], env),
        Case(f"bootstrap again ({name})", launcher("bootstrap"), env),
        Case(f"status, explicit interpreter ({name})", status, explicit),
        Case(f"status, venv found by the launcher ({name})", status, env),
    ]
    samples = measure(cases, rounds(20, 5))
    return [
        timed_row(
            BENCH, f"5 second use, bootstrap no-op ({name})", samples, cases[1].name, cases[0].name
        ),
        timed_row(
            BENCH,
            f"5 second use, status via the venv ({name})",
            samples,
            cases[3].name,
            cases[2].name,
            limit=1.1,
        ),
    ]


def main() -> int:
    python = real_python()
    rows: list[Row] = []
    notes: list[str] = []
    with workdir("bootstrap") as tmp:
        tools = tool_dir(tmp, python)
        uv, how = uv_dir(tmp, python)
        notes.append(how)
        for name, path in (("uv", f"{uv}:{tools}"), ("pip", str(tools))):
            expect((name == "uv") == (shutil.which("uv", path=path) is not None), "PATH mix-up")
            elapsed, venv_python, env = first_use(tmp, name, path)
            rows.append(Row(BENCH, f"5 first use, {name} (cold caches)", elapsed, "s"))
            rows += second_use(tmp, name, venv_python, env)
    emit(rows, notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
