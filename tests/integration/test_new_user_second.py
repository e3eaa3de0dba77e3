"""Issue 27, items 1-6: what a new user hit at install and first use, each through the real
launcher and commands, with a fresh HOME in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import (
    LAUNCHER,
    ROOT,
    HookRun,
    edit_state,
    make_repo,
    payload,
    plan_body,
    run_launcher,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI

BOOTSTRAPPING = {"AUTOPILOT_CODEX_PYTHON": ""}  # the launcher finds or builds its own venv


def can_mount() -> bool:
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    return shutil.which("unshare") is not None and probe.returncode == 0


needs_mount = pytest.mark.skipif(
    shutil.which("unshare") is None or not can_mount(),
    reason="needs `unshare -rm` to make a read-only folder that even root cannot write",
)


def read_only_run(
    folder: Path, args: list[str], env: dict[str, str], cwd: Path, timeout: float = 60
) -> HookRun:
    """The real launcher with `folder` mounted read-only (EROFS, as in a sandbox or on a
    read-only volume; modes alone do not stop root)."""
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(folder), str(LAUNCHER), *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable, **env},
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return HookRun(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


# -- 1: an unwritable state home ------------------------------------------------------------


@needs_mount
def test_1_a_read_only_state_home_is_one_line_not_a_five_minute_wait(
    tmp_path: Path, isolated: Path
) -> None:
    isolated.mkdir(parents=True)
    # Before: `until mkdir "$lock"` took "read-only" for "locked" and waited 300 s.
    result = read_only_run(isolated, ["status"], BOOTSTRAPPING, tmp_path, timeout=60)
    assert result.code == 1
    line = one_line(result.stderr)
    assert line.startswith(f"autopilot-codex: cannot write to {isolated}")
    assert "Read-only file system" in line and "another setup" not in line


@needs_mount
def test_1_a_read_only_project_folder_is_the_permission_line(
    repo: Path, manager: FakeOpenAI
) -> None:
    folder = project_dir(repo)
    folder.mkdir(parents=True)
    result = read_only_run(folder, ["plan", "build", "it"], {}, repo)
    assert result.code == 1, result.stdout + result.stderr
    line = one_line(result.stdout + result.stderr)
    assert "internal error" not in line
    assert line.startswith("autopilot-codex: cannot write to ") and "read-only" in line
    assert not manager.requests_for("responses")  # refused before any paid call


def test_1_a_state_home_under_a_file_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder\n")
    home = tmp_path / "afile" / "state"
    env = {**BOOTSTRAPPING, "AUTOPILOT_CODEX_HOME": str(home)}
    result = run_launcher(["status"], cwd=tmp_path, env=env)
    assert result.code == 1
    line = one_line(result.stderr)
    assert line.startswith(f"autopilot-codex: cannot write to {home}")
    assert "(Not a directory)" in line
    repo = make_repo(tmp_path / "repo")
    planned = run_launcher(["plan", "x"], cwd=repo, env={"AUTOPILOT_CODEX_HOME": str(home)})
    assert planned.code == 1
    line = one_line(planned.stdout + planned.stderr)
    assert "internal error" not in line and "Not a directory" in line and str(home) in line


# -- 2: one environment, built once, with progress shown ------------------------------------


def fake_uv(tmp_path: Path) -> tuple[Path, Path]:
    """A `uv` first on PATH that builds a real venv offline (this interpreter's packages
    through a .pth) and records each call: the launcher prefers uv when it is there."""
    shim = tmp_path / "uv-shim"
    shim.mkdir()
    log = tmp_path / "uv-calls.log"
    (shim / "uv").write_text(
        f"""#!{sys.executable}
import subprocess, sys, sysconfig
from pathlib import Path
with open({str(log)!r}, "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
if sys.argv[1] == "venv":
    venv = sys.argv[-1]
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    py = str(Path(venv, "bin", "python"))
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([py, "-c", code], capture_output=True, text=True).stdout.strip()
    Path(purelib, "host.pth").write_text(sysconfig.get_paths()["purelib"] + "\\n")
"""
    )
    (shim / "uv").chmod(0o755)
    return shim, log


def test_2_first_use_with_plugin_dir_builds_one_venv_and_says_so(
    tmp_path: Path, isolated: Path
) -> None:
    shim, log = fake_uv(tmp_path)
    path = f"{shim}{os.pathsep}{os.environ['PATH']}"
    plugin_data = tmp_path / "plugin-data"  # what `claude --plugin-dir` gives the commands
    repo = make_repo(tmp_path / "repo")
    slash = run_launcher(
        ["--from", "claude", "status"],
        cwd=repo,
        env={**BOOTSTRAPPING, "PATH": path, "CLAUDE_PLUGIN_DATA": str(plugin_data)},
    )
    assert slash.code == 0, slash.stderr
    assert "[1/3] creating the venv" in slash.stderr
    assert "[2/3] installing its packages" in slash.stderr
    assert (isolated / "venv" / "bin" / "python").exists()
    assert not (plugin_data / "venv").exists()
    terminal = run_launcher(["status"], cwd=repo, env={**BOOTSTRAPPING, "PATH": path})
    assert terminal.code == 0, terminal.stderr
    assert "setting up" not in terminal.stderr
    venvs = [line for line in log.read_text().splitlines() if line.startswith("venv ")]
    assert len(venvs) == 1, log.read_text()


# -- 3: install claude, install --help, a linked launcher -----------------------------------


def recording_claude(tmp_path: Path) -> tuple[dict[str, str], Path]:
    shim = tmp_path / "claude-shim"
    shim.mkdir(exist_ok=True)
    log = tmp_path / "claude-calls.log"
    (shim / "claude").write_text(f'#!/bin/sh\necho "$@" >>"{log}"\nexit 0\n')
    (shim / "claude").chmod(0o755)
    # A new user's PATH: without any `autopilot-codex` already on it (CI runs the suite in an
    # activated venv, whose bin holds the package's own entry point).
    rest = [
        d
        for d in os.environ["PATH"].split(os.pathsep)
        if not (Path(d) / "autopilot-codex").exists()
    ]
    return {"PATH": os.pathsep.join([str(shim), *rest])}, log


def test_3_install_claude_is_install(tmp_path: Path, manager: FakeOpenAI) -> None:
    env, log = recording_claude(tmp_path)
    result = run_launcher(["install", "claude"], cwd=tmp_path, env=env)
    assert "invalid choice" not in result.stdout + result.stderr
    assert log.read_text().splitlines() == [
        f"plugin marketplace add {LAUNCHER.parent}/..",
        "plugin install autopilot-codex@autopilot-codex",
    ]
    assert "manager:" in result.stdout  # doctor ran


def test_3_install_refuses_an_unknown_option_before_doing_anything(tmp_path: Path) -> None:
    env, log = recording_claude(tmp_path)
    result = run_launcher(["install", "claude", "--bogus"], cwd=tmp_path, env=env)
    assert result.code == 2
    assert one_line(result.stderr).endswith("nothing was done")
    assert not log.exists()


def test_3_install_help_names_install_codex(tmp_path: Path) -> None:
    usage = run_launcher(["install", "--help"], cwd=tmp_path).stdout
    assert "install codex" in usage and "uninstall codex" in usage
    assert run_launcher(["install", "claude", "--help"], cwd=tmp_path).stdout == usage


def test_3_a_linked_launcher_finds_its_plugin(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "real").symlink_to(LAUNCHER)
    (bin_dir / "autopilot-codex").symlink_to("real")  # relative, and a link to a link
    result = subprocess.run(
        [str(bin_dir / "autopilot-codex"), "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable},
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("autopilot-codex ")


# -- 4: on PATH after install ---------------------------------------------------------------


def test_4_install_links_the_launcher_into_a_user_bin_on_path(
    tmp_path: Path, manager: FakeOpenAI
) -> None:
    env, _ = recording_claude(tmp_path)
    user_bin = Path(os.environ["HOME"]) / ".local" / "bin"
    user_bin.mkdir(parents=True)
    env["PATH"] = f"{env['PATH']}{os.pathsep}{user_bin}"
    result = run_launcher(["install"], cwd=tmp_path, env=env)
    link = user_bin / "autopilot-codex"
    assert link.resolve() == LAUNCHER.resolve()
    assert f"PATH: linked {link} -> " in result.stdout
    again = run_launcher(["install"], cwd=tmp_path, env=env)
    assert f"PATH: `autopilot-codex` is {link}" in again.stdout


def test_4_install_says_how_to_get_on_path_without_a_user_bin(
    tmp_path: Path, manager: FakeOpenAI
) -> None:
    env, _ = recording_claude(tmp_path)
    result = run_launcher(["install"], cwd=tmp_path, env=env)
    assert "`autopilot-codex` is not on your PATH" in result.stdout
    assert f'export PATH="{LAUNCHER.parent}:$PATH"' in result.stdout
    assert not (Path(os.environ["HOME"]) / ".local").exists()  # never made one unasked


# -- 5: the manager's reachability, for free -----------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_5_doctor_finds_an_unreachable_manager_without_a_paid_call(tmp_path: Path) -> None:
    env, _ = recording_claude(tmp_path)
    env["OPENAI_BASE_URL"] = f"http://127.0.0.1:{closed_port()}/v1"
    for verb in (["doctor"], ["install"]):
        result = run_launcher(verb, cwd=tmp_path, env=env)
        assert result.code == 1
        assert "cannot be reached" in result.stdout
        assert "Ready." not in result.stdout


def test_5_doctor_asks_the_model_list_and_spends_nothing(
    tmp_path: Path, manager: FakeOpenAI
) -> None:
    result = run_launcher(["doctor"], cwd=tmp_path)
    assert f"manager: {manager.base_url}" in result.stdout and " answers" in result.stdout
    assert [(r.method, r.path) for r in manager.requests] == [("GET", "/v1/models")]


def test_5_the_codex_backend_says_what_it_cannot_check_for_free() -> None:
    from autopilot_codex.commands.doctor_reach import reach_line
    from autopilot_codex.config import load_config

    config = load_config()
    assert config is not None
    ok, line, note = reach_line("codex", config)
    assert ok and note and "no free request" in line and "--probe" in line


# -- 6: Codex install -----------------------------------------------------------------------


def codex_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    shim = tmp_path / "codex-shim"
    shim.mkdir(exist_ok=True)
    (shim / "codex").write_text("#!/bin/sh\nexit 0\n")  # doctor looks for the CLI only
    (shim / "codex").chmod(0o755)
    return {"CODEX_HOME": str(home), "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}, home


def our_groups(hooks_file: Path) -> int:
    document = json.loads(hooks_file.read_text())
    return sum(
        1
        for groups in document["hooks"].values()
        for group in groups
        if "bin/autopilot-codex" in json.dumps(group)
    )


def test_6_uninstall_gives_back_hooks_json_byte_for_byte(tmp_path: Path) -> None:
    env, home = codex_env(tmp_path)
    mine = b'{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}'
    (home / "hooks.json").write_bytes(mine)
    assert run_launcher(["install", "codex"], cwd=tmp_path, env=env).code == 0
    assert (home / "skills").is_dir()
    removed = run_launcher(["uninstall", "codex"], cwd=tmp_path, env=env)
    assert removed.code == 0, removed.stdout
    assert (home / "hooks.json").read_bytes() == mine
    assert not (home / "skills").exists()


def test_6_uninstall_keeps_a_skills_folder_that_was_there(tmp_path: Path) -> None:
    env, home = codex_env(tmp_path)
    (home / "skills" / "mine").mkdir(parents=True)
    assert run_launcher(["install", "codex"], cwd=tmp_path, env=env).code == 0
    assert run_launcher(["uninstall", "codex"], cwd=tmp_path, env=env).code == 0
    assert [p.name for p in (home / "skills").iterdir()] == ["mine"]


def plugin_copy(where: Path) -> Path:
    """A second checkout of the plugin: what a user moves or deletes."""
    skip = shutil.ignore_patterns(".venv", ".git", "tests", "bench", "__pycache__", "*.egg-info")
    shutil.copytree(ROOT, where, ignore=skip, symlinks=True)
    return where / "bin" / "autopilot-codex"


def test_6_doctor_flags_a_moved_launcher(tmp_path: Path, manager: FakeOpenAI) -> None:
    env, _ = codex_env(tmp_path)
    copy = plugin_copy(tmp_path / "checkout")
    installed = subprocess.run(
        [str(copy), "install", "codex"],
        capture_output=True,
        text=True,
        env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable, **env},
        cwd=tmp_path,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    before = run_launcher(["doctor"], cwd=tmp_path, env=env).stdout
    assert "ok   Codex hooks:" in before, before
    (tmp_path / "checkout").rename(tmp_path / "moved")
    result = run_launcher(["doctor"], cwd=tmp_path, env=env)
    assert result.code == 1
    line = next(li for li in result.stdout.splitlines() if "Codex hooks:" in li)
    assert line.startswith("FIX ") and f"{copy}, which is missing" in line
    assert "install codex --user` again" in line
    assert "Ready." not in result.stdout


def test_6_doctor_flags_a_second_copy_and_install_repairs_it(
    tmp_path: Path, manager: FakeOpenAI
) -> None:
    env, home = codex_env(tmp_path)
    assert run_launcher(["install", "codex"], cwd=tmp_path, env=env).code == 0
    one = our_groups(home / "hooks.json")
    # The record of the install lost (a copied home, a manual clean-up): install runs again.
    (home / "autopilot-codex-install.json").unlink()
    again = run_launcher(["install", "codex"], cwd=tmp_path, env=env)
    assert again.code == 0, again.stdout
    assert our_groups(home / "hooks.json") == one
    assert "repaired:" in again.stdout
    document = json.loads((home / "hooks.json").read_text())
    document["hooks"]["Stop"].append(document["hooks"]["Stop"][0])  # a second copy, by hand
    (home / "hooks.json").write_text(json.dumps(document))
    doctor = run_launcher(["doctor"], cwd=tmp_path, env=env)
    line = next(li for li in doctor.stdout.splitlines() if "Codex hooks:" in li)
    assert line.startswith("FIX ") and "a second copy" in line
    assert run_launcher(["install", "codex"], cwd=tmp_path, env=env).code == 0
    assert our_groups(home / "hooks.json") == one


# -- 15: a hook whose stdin never closes ----------------------------------------------------


def test_15_a_hook_whose_input_never_ends_gives_up_and_allows(
    repo: Path, manager: FakeOpenAI
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    assert run_launcher(["plan", "build", "it"], cwd=repo).code == 0
    hook = subprocess.Popen(
        [str(LAUNCHER), "hook", "Stop"],
        stdin=subprocess.PIPE,  # held open and never written: a wrapper that forgot to close
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=repo,
        env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable},
    )
    try:
        hook.wait(timeout=120)  # not communicate(): that would close stdin
    finally:
        hook.kill()
    assert hook.stdin is not None and hook.stdout is not None and hook.stderr is not None
    with hook.stdin, hook.stdout, hook.stderr:
        out, err = hook.stdout.read(), hook.stderr.read()
    assert hook.returncode == 0
    assert out == b""  # no decision: the Stop is allowed
    assert b"hook skipped (InputTimeout: its input did not end within" in err
    assert not manager.requests_for("responses", "Verdict")


# -- 14: a Stop with background work still running ----------------------------------------


def test_14_a_stop_with_a_background_shell_running_is_allowed_and_judged_when_it_ends(
    repo: Path, manager: FakeOpenAI
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    assert run_launcher(["plan", "--session-id", "sess-1", "build", "it"], cwd=repo).code == 0
    shell = {
        "id": "b1",
        "type": "shell",
        "status": "running",
        "description": "npm test",
        "command": "npm test",
    }
    agent = {"id": "a2", "type": "subagent", "status": "running", "description": "x" * 300}
    paused = payload("Stop", repo, background_tasks=[shell, agent])
    waited = run_launcher(
        ["hook", "Stop", "--host", "claude"], json.dumps(paused).encode(), cwd=repo
    )
    assert waited.code == 0, waited.stderr
    answer = json.loads(waited.stdout)
    # Allowed with a word to the user, nothing asked of the manager, no turn counted.
    assert "decision" not in answer
    message = answer["systemMessage"]
    assert "2 background tasks still running (npm test; " in message and "x" * 119 + "…" in message
    assert "judges the turn once they end" in message
    assert manager.requests_for(schema="Verdict") == []
    state = state_json(repo)
    assert state["iteration"] == 0 and state["status"] == "running"
    events = (project_dir(repo) / "events.jsonl").read_text()
    assert '"stop.background"' in events
    # The session woke when the work ended and stopped again: now the turn is judged.
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    done = payload("Stop", repo, background_tasks=[])
    judged = run_launcher(["hook", "Stop", "--host", "claude"], json.dumps(done).encode(), cwd=repo)
    assert json.loads(judged.stdout)["decision"] == "block"
    assert len(manager.requests_for(schema="Verdict")) == 1
    assert state_json(repo)["iteration"] == 1


# -- 9: guidance that agrees with itself ----------------------------------------------------


def test_9_stop_on_a_ralph_loop_names_the_command_that_restarts_it(repo: Path) -> None:
    started = run_launcher(
        ["ralph", "--completion-promise", "DONE", "--session-id", "s1", "Make", "it"], cwd=repo
    )
    assert started.code == 0, started.stdout + started.stderr
    stopped = run_launcher(["stop"], cwd=repo).stdout
    assert "Resume with" not in stopped
    assert "Start it again with autopilot-codex ralph" in stopped
    resumed = run_launcher(["resume"], cwd=repo).stdout
    assert "the last loop here was a ralph loop; start it again with autopilot-codex ralph" in (
        resumed
    )


def test_9_an_autopilot_loop_and_one_iteration(repo: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    assert run_launcher(["plan", "build", "it"], cwd=repo).code == 0
    assert (
        "the loop here is an autopilot loop, not ralph" in run_launcher(["cancel"], cwd=repo).stdout
    )
    run_launcher(["stop"], cwd=repo)
    started = run_launcher(
        ["ralph", "--completion-promise", "DONE", "--session-id", "s1", "Make", "it"], cwd=repo
    )
    assert started.code == 0, started.stdout + started.stderr
    assert run_launcher(["cancel"], cwd=repo).code == 0
    status = run_launcher(["status"], cwd=repo).stdout
    assert " after 1 iteration " in status and "1 iterations" not in status


def test_9_ask_shows_a_sub_cent_spend_as_status_does(repo: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    assert run_launcher(["plan", "build", "it"], cwd=repo).code == 0
    edit_state(repo, budget_used_usd=0.004)
    assert "spent <$0.01 of $5.00" in run_launcher(["status"], cwd=repo).stdout
    costs = run_launcher(["ask", "--costs"], cwd=repo).stdout
    assert "Budget: <$0.01 of $5.00 used" in costs, costs


# -- 12, 13: sessions -----------------------------------------------------------------------


def state_json(repo: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((project_dir(repo) / "state.json").read_text())
    return loaded


def test_12_a_session_id_of_null_claims_nothing(repo: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    planned = run_launcher(["plan", "--session-id", "null", "build", "it"], cwd=repo)
    assert planned.code == 0, planned.stdout
    assert state_json(repo)["session_id"] is None
    assert "unclaimed" in run_launcher(["status"], cwd=repo).stdout


def test_13_resume_with_a_new_session_takes_over_a_running_loop(
    repo: Path, manager: FakeOpenAI
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    assert run_launcher(["plan", "--session-id", "crashed-1", "build", "it"], cwd=repo).code == 0
    taken = run_launcher(["resume", "--session-id", "fresh-22"], cwd=repo)
    assert taken.code == 0
    assert "it now belongs to session fresh-22" in taken.stdout
    assert state_json(repo)["session_id"] == "fresh-22"
    (marker,) = (Path(os.environ["AUTOPILOT_CODEX_HOME"]) / "active").iterdir()
    marker_data = json.loads(marker.read_text())
    assert marker_data["session_id"] == "fresh-22"  # the hooks of the new session are heard
    again = run_launcher(["resume", "--session-id", "fresh-22"], cwd=repo)
    assert again.stdout.strip() == "autopilot-codex: the loop is already running."


# -- 11: two promise tags -------------------------------------------------------------------


def test_11_of_two_promise_tags_the_first_counts(repo: Path) -> None:
    started = run_launcher(
        ["ralph", "--completion-promise", "DONE", "--session-id", "s1", "Make", "it"], cwd=repo
    )
    assert started.code == 0, started.stdout + started.stderr
    message = "<promise>NOT YET</promise>\nstill failing\n<promise>DONE</promise>"
    stop = payload("Stop", repo, "s1", last_assistant_message=message)
    hook = run_launcher(["hook", "Stop"], stdin=json.dumps(stop).encode(), cwd=repo)
    assert hook.code == 0
    assert json.loads(hook.stdout)["decision"] == "block"  # the loop goes on
    assert state_json(repo)["status"] == "running"


def test_14_a_ralph_stop_with_background_work_running_waits_for_it(repo: Path) -> None:
    started = run_launcher(
        ["ralph", "--completion-promise", "DONE", "--session-id", "s1", "Make", "it"], cwd=repo
    )
    assert started.code == 0, started.stdout + started.stderr
    before = state_json(repo)["iteration"]
    shell = {"id": "b1", "type": "shell", "status": "running", "description": "make test"}
    # Even a promise said while the work runs is read only once the session is woken.
    paused = payload(
        "Stop",
        repo,
        "s1",
        last_assistant_message="<promise>DONE</promise>",
        background_tasks=[shell],
    )
    waited = run_launcher(["hook", "Stop"], stdin=json.dumps(paused).encode(), cwd=repo)
    answer = json.loads(waited.stdout)
    assert "decision" not in answer
    assert answer["systemMessage"] == (
        "autopilot-codex: 1 background task still running (make test); the prompt comes back once it ends."
    )
    state = state_json(repo)
    assert state["status"] == "running"
    assert state["iteration"] == before
    woken = payload("Stop", repo, "s1", last_assistant_message="still working", background_tasks=[])
    judged = run_launcher(["hook", "Stop"], stdin=json.dumps(woken).encode(), cwd=repo)
    assert json.loads(judged.stdout)["decision"] == "block"  # the prompt comes back


# -- 8: the user's commands -----------------------------------------------------------------


def test_8_a_misspelt_command_gets_a_suggestion_and_hook_is_not_listed(tmp_path: Path) -> None:
    typo = run_launcher(["stauts"], cwd=tmp_path)
    assert typo.code == 1
    assert one_line(typo.stdout + typo.stderr) == (
        "autopilot-codex: unknown command 'stauts': did you mean status? "
        "(`autopilot-codex --help` lists them)"
    )
    top = run_launcher(["--help"], cwd=tmp_path).stdout
    assert "\n    hook " not in top and "\n    status " in top
    assert run_launcher(["hook", "--help"], cwd=tmp_path).stdout.startswith("usage:")


# -- 7: a goal is never reordered or cut ----------------------------------------------------


def test_7_an_unknown_option_word_stays_where_it_stands(repo: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    planned = run_launcher(["plan", "--verbose", "flag", "should", "work"], cwd=repo)
    assert planned.code == 0, planned.stdout
    assert state_json(repo)["goal"] == "--verbose flag should work"


def test_7_a_known_option_inside_the_goal_is_refused(repo: Path, manager: FakeOpenAI) -> None:
    words = ["add", "--check", "support", "to", "the", "cli"]
    refused = run_launcher(["plan", *words], cwd=repo)
    assert refused.code == 1
    assert "--check stands inside the goal" in one_line(refused.stdout + refused.stderr)
    assert not manager.requests  # nothing planned, nothing spent
    manager.enqueue(plan_body(), schema="Plan")
    assert run_launcher(["plan", "--", *words], cwd=repo).code == 0
    assert state_json(repo)["goal"] == "add --check support to the cli"


# -- 10: a dirty tree at plan ---------------------------------------------------------------


def test_10_plan_says_uncommitted_work_is_part_of_the_review(
    repo: Path, manager: FakeOpenAI
) -> None:
    (repo / "README.md").write_text("# edited, not committed\n")
    (repo / "notes.txt").write_text("mine\n")
    manager.enqueue(plan_body(), schema="Plan")
    planned = run_launcher(["plan", "build", "it"], cwd=repo)
    assert planned.code == 0, planned.stdout
    assert planned.stdout.startswith(
        "Note: uncommitted work here (README.md, notes.txt) is part of what the manager reviews"
    )
    assert "--stash" in planned.stdout.splitlines()[0]


def test_10_plan_with_stash_starts_from_head_and_keeps_the_work(
    repo: Path, manager: FakeOpenAI
) -> None:
    (repo / "README.md").write_text("# edited, not committed\n")
    (repo / "notes.txt").write_text("mine\n")
    manager.enqueue(plan_body(), schema="Plan")
    planned = run_launcher(["plan", "--stash", "build", "it"], cwd=repo)
    assert planned.code == 0, planned.stdout
    assert "kept aside with git stash" in planned.stdout
    assert (repo / "README.md").read_text() == "# demo\n" and not (repo / "notes.txt").exists()
    stashed = subprocess.run(
        ["git", "stash", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert "autopilot-codex: work kept aside before plan" in stashed
    manager.enqueue(plan_body(), schema="Plan")
    quiet = run_launcher(["stop"], cwd=repo)
    assert quiet.code == 0
    (repo / "other.txt").write_text("x\n")
    included = run_launcher(["plan", "--include-dirty", "build", "it"], cwd=repo)
    assert included.stdout.startswith("Uncommitted work included in the loop's review: other.txt.")


def test_10_a_plan_that_fails_after_its_stash_gives_the_work_back(
    repo: Path, manager: FakeOpenAI
) -> None:
    (repo / "README.md").write_text("# edited, not committed\n")
    (repo / "notes.txt").write_text("mine\n")
    # Nothing queued: the manager answers 503 and the plan fails after the stash.
    failed = run_launcher(["plan", "--stash", "build", "it"], cwd=repo)
    assert failed.code == 1, failed.stdout
    assert "was given back" in failed.stdout
    assert (repo / "README.md").read_text() == "# edited, not committed\n"
    assert (repo / "notes.txt").read_text() == "mine\n"
    stashes = subprocess.run(
        ["git", "stash", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert stashes == ""


def test_9_a_run_that_is_not_running_says_run_resume(repo: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    assert run_launcher(["plan", "build", "it"], cwd=repo).code == 0
    edit_state(repo, style="rounds", own=None, status="paused", stop_reason="interrupted")
    status = run_launcher(["status"], cwd=repo).stdout
    assert "Held by the run's driver" not in status
    assert "Next: `autopilot-codex run --resume`." in status


def test_8_run_refuses_a_negative_budget_and_suggests_a_misspelt_option(repo: Path) -> None:
    negative = run_launcher(["run", "--budget=-2", "--implementer", "claude", "x"], cwd=repo)
    assert negative.code == 1
    assert one_line(negative.stderr) == (
        "autopilot-codex run: --budget -2 is not accepted: "
        "budget_usd must be a number above 0 up to 10000"
    )
    assert not (project_dir(repo) / "state.json").exists()  # no loop, no handoff
    typo = run_launcher(["run", "--rounsd", "3", "x"], cwd=repo)
    assert typo.code == 1
    assert "unknown option --rounsd: did you mean --rounds?" in typo.stderr
    usage = " ".join(run_launcher(["run", "--help"], cwd=repo).stdout.split())
    assert "required, except with --resume" in usage
    assert "(default: 10;" in usage and "(default: 3600)" in usage


def test_9_a_done_a_red_check_overruled_does_not_read_as_the_result(
    repo: Path, manager: FakeOpenAI
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    planned = ["plan", "--session-id", "sess-1", "--check", "false", "build", "it"]
    assert run_launcher(planned, cwd=repo).code == 0
    manager.enqueue(verdict_body("done", done=True), schema="Verdict")
    stop = json.dumps(payload("Stop", repo, last_assistant_message="All done.")).encode()
    hook = run_launcher(["hook", "Stop"], stdin=stop, cwd=repo)
    assert json.loads(hook.stdout)["decision"] == "block"
    status = run_launcher(["status"], cwd=repo).stdout
    assert "Last verdict: done, overruled by the red check `false` (iteration 1)" in status
