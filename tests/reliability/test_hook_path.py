"""The hook commands as the hosts run them: `sh -c` with the host's PATH, in the session's
folder. A PATH holding a relative folder (`node_modules/.bin`, `.`) resolves inside the work
tree, where the implementer writes: a `bash` planted there runs for every hook, unwalled, as
the user. The commands start `/bin/sh` by its absolute path; the launcher takes bash from fixed
places, and drops from PATH every entry that is empty, relative or inside the work tree before
it runs any program by name (an absolute entry inside the tree, as direnv's `PATH_add bin`
makes, is the implementer's too)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

PLANTED = "#!/bin/sh\necho ran >> {log}\n"


def commands() -> list[str]:
    found: list[str] = []
    for name in ("hooks.json", "codex.json"):
        document = json.loads((ROOT / "hooks" / name).read_text())
        for groups in document["hooks"].values():
            found += [h["command"] for g in groups for h in g["hooks"]]
    return found


def test_no_hook_command_runs_a_program_planted_on_a_relative_path(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    planted = tree / "node_modules" / ".bin"
    planted.mkdir(parents=True)
    ran = tmp_path / "ran.log"
    for name in ("bash", "sh", "python3", "env"):
        (planted / name).write_text(PLANTED.format(log=ran))
        (planted / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"node_modules/.bin:{os.environ['PATH']}",
        "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "PLUGIN_ROOT": str(ROOT),
        "AUTOPILOT_CODEX_HOME": str(tmp_path / "home"),
    }
    for command in commands():
        subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=tree,
            env=env,
            input=b"{}",
            capture_output=True,
            check=False,
            timeout=60,
        )
    assert not ran.exists(), ran.read_text()


PLANTED_NAMES = (
    "bash", "sh", "env", "flock", "cat", "cksum", "cut", "mkdir", "rm", "ln", "mv", "uname", "ps",
    "readlink", "uv", "python3", "python3.11", "python",
)  # fmt: skip
PYTHONS = ("python3", *(f"python3.{minor}" for minor in range(10, 15)), "python")


def planted_tree(tmp_path: Path) -> tuple[Path, Path, str]:
    """A work tree (cwd: a folder inside it) with every name planted in a relative PATH folder,
    `.`, and an absolute folder inside the tree; the PATH that puts them first."""
    tree = tmp_path / "repo"
    (tree / ".git").mkdir(parents=True)
    cwd = tree / "sub"
    ran = tmp_path / "ran.log"
    for folder in (cwd / "node_modules" / ".bin", cwd, tree / "bin"):
        folder.mkdir(parents=True, exist_ok=True)
        for name in PLANTED_NAMES:
            (folder / name).write_text(PLANTED.format(log=ran))
            (folder / name).chmod(0o755)
    path = f"node_modules/.bin:.::{tree}/bin:{tree}//sub/../bin:{os.environ['PATH']}"
    return cwd, ran, path


def test_the_launcher_runs_nothing_from_the_work_tree_at_bootstrap(tmp_path: Path) -> None:
    # The Pythons on the real PATH are shadowed by ones too old to use, so the bootstrap stops
    # at "needs Python" after it ran cksum, cat, mkdir, uname, ps, flock and the lookups.
    cwd, ran, path = planted_tree(tmp_path)
    bootstrapped(tmp_path, cwd, path.replace(os.environ["PATH"], ""), "/bin/sh")
    assert not ran.exists(), ran.read_text()


def bootstrapped(tmp_path: Path, cwd: Path, first: str, shell: str) -> dict[str, str]:
    """`bootstrap` run by `shell` in `cwd` with PATH `first` then Pythons too old to use, so
    it stops at "needs Python" after its lookups; the environment it ran with."""
    old = tmp_path / "old-pythons"
    old.mkdir()
    for name in PYTHONS:
        (old / name).write_text("#!/bin/sh\necho 0\n")
        (old / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{first}{old}:/usr/bin:/bin"}
    env["AUTOPILOT_CODEX_HOME"] = str(tmp_path / "home")
    env.pop("AUTOPILOT_CODEX_PYTHON", None)
    done = subprocess.run(
        [shell, str(ROOT / "bin" / "autopilot-codex"), "bootstrap"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert "needs Python >= 3.10" in done.stderr, done.stderr
    return env


def test_the_python_a_hook_starts_gets_a_path_without_the_work_tree(tmp_path: Path) -> None:
    cwd, ran, path = planted_tree(tmp_path)
    home = tmp_path / "home"
    (home / "active").mkdir(parents=True)
    (home / "active" / "loop").write_text("")
    venv = home / "venv"
    (venv / "bin").mkdir(parents=True)
    seen = tmp_path / "path.txt"
    kept = tmp_path / "user-path.txt"
    (venv / "bin" / "python").write_text(
        f'#!/bin/sh\nprintf %s "$PATH" > {seen}\nprintf %s "$AUTOPILOT_CODEX_USER_PATH" > {kept}\n'
    )
    (venv / "bin" / "python").chmod(0o755)
    requirements = (ROOT / "bridge" / "requirements.txt").read_bytes()
    stamp = subprocess.run(
        ["cksum"], input=requirements, capture_output=True, check=True
    ).stdout.split()[0]
    (venv / ".autopilot-codex-stamp").write_bytes(stamp + b"\n")
    env = {
        **os.environ,
        "PATH": path,
        "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "AUTOPILOT_CODEX_HOME": str(home),
    }
    env.pop("AUTOPILOT_CODEX_PYTHON", None)
    stop = next(c for c in commands() if "hook Stop --host claude" in c)
    for command in (stop, f'/bin/sh "{ROOT}/bin/autopilot-codex" status'):
        seen.unlink(missing_ok=True)
        subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            env=env,
            input=b"{}",
            capture_output=True,
            check=False,
            timeout=60,
        )
        entries = seen.read_text().split(":")
        assert entries, command
        assert all(e.startswith("/") and not e.startswith(str(tmp_path)) for e in entries), entries
        # The host's own PATH is kept aside for the implementer's walled code (checks, rounds).
        assert kept.read_text() == path
    assert not ran.exists(), ran.read_text()


@pytest.mark.parametrize("marker", [None, "active/loop", "active/.hidden", "rails/..odd", "link"])
def test_the_no_loop_answer_before_bash_sees_the_markers_bash_sees(
    tmp_path: Path, marker: str | None
) -> None:
    # `/bin/sh` answers a hook with no guarded loop before bash starts: a marker bash's
    # nullglob and dotglob count (a dotfile, a dangling link) must keep the hook running.
    home = tmp_path / "home"
    for folder in ("active", "rails"):
        (home / folder).mkdir(parents=True)
    if marker == "link":
        (home / "active" / "gone").symlink_to(tmp_path / "nowhere")
    elif marker is not None:
        (home / marker).write_text("")
    reached = tmp_path / "reached"
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\ntouch {reached}\n")
    python.chmod(0o755)
    env = {**os.environ, "AUTOPILOT_CODEX_HOME": str(home), "AUTOPILOT_CODEX_PYTHON": str(python)}
    for shell in ("/bin/sh", "/bin/bash"):
        reached.unlink(missing_ok=True)
        launcher = str(ROOT / "bin" / "autopilot-codex")
        subprocess.run(
            [shell, launcher, "hook", "Stop"], env=env, input=b"{}", check=True, timeout=60
        )
        assert reached.exists() == (marker is not None), shell


def test_a_loops_hook_gets_the_same_path_from_sh_as_from_bash(tmp_path: Path) -> None:
    # A loop's hook with its Python ready is answered by `/bin/sh` alone (no bash): its PATH
    # rule is the same function bash runs, and must leave the same PATH, for the session's
    # folder (reached through a link) and the host's project folder, each a work tree.
    cwd, ran, path = planted_tree(tmp_path)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "tools").mkdir()
    link = tmp_path / "through-link"
    link.symlink_to(cwd)
    home = tmp_path / "home"
    (home / "active").mkdir(parents=True)
    (home / "active" / "loop").write_text("")
    seen = tmp_path / "seen.txt"
    python = tmp_path / "python"
    python.write_text(
        f'#!/bin/sh\nprintf "%s|%s|%s" "$PATH" "$AUTOPILOT_CODEX_USER_PATH" "$*" > {seen}\n'
    )
    python.chmod(0o755)
    path = f"{project}/tools:{project}//tools/:/usr//bin:{path}"
    env = {
        **os.environ,
        "PATH": path,
        "CLAUDE_PROJECT_DIR": str(project),
        "AUTOPILOT_CODEX_HOME": str(home),
        "AUTOPILOT_CODEX_PYTHON": str(python),
    }
    launcher = str(ROOT / "bin" / "autopilot-codex")
    found = []
    for shell in ("/bin/sh", "/bin/bash"):
        seen.unlink(missing_ok=True)
        subprocess.run(
            [shell, launcher, "hook", "Stop", "--host", "claude"],
            cwd=link,
            env=env,
            input=b"{}",
            check=True,
            timeout=60,
        )
        found.append(seen.read_text())
    assert found[0] == found[1]
    kept, user, argv = found[0].split("|")
    assert user == path
    assert kept.split(":")[0] == "/usr/bin"
    assert not any(e.startswith(str(tmp_path)) for e in kept.split(":")), kept
    assert argv.endswith("hook Stop --host claude")
    assert not ran.exists(), ran.read_text()


@pytest.mark.parametrize("shell", ["/bin/sh", "/bin/bash"])
def test_a_path_entry_linked_into_the_work_tree_is_the_work_trees(
    tmp_path: Path, shell: str
) -> None:
    # A PATH folder outside the tree by its name, inside it by its target (a link the user
    # made, or one an older install left): what the implementer plants in the tree's `bin`
    # must not run at bootstrap, and the Python a hook starts must not get the entry either
    # (as `searchpath.trusted_path` drops it for the bridge's own lookups).
    cwd, ran, _ = planted_tree(tmp_path)
    linked = tmp_path / "tools"
    linked.symlink_to(cwd.parent / "bin")
    env = bootstrapped(tmp_path, cwd, f"{linked}:", shell)
    assert not ran.exists(), ran.read_text()
    launcher = str(ROOT / "bin" / "autopilot-codex")
    home = tmp_path / "home"
    (home / "active").mkdir(parents=True, exist_ok=True)
    (home / "active" / "loop").write_text("")
    seen = tmp_path / "seen.txt"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nprintf %s "$PATH" > {seen}\n')
    python.chmod(0o755)
    env["AUTOPILOT_CODEX_PYTHON"] = str(python)
    subprocess.run(
        [shell, launcher, "hook", "Stop", "--host", "claude"],
        cwd=cwd,
        env=env,
        input=b"{}",
        check=True,
        timeout=60,
    )
    assert str(linked) not in seen.read_text().split(":"), seen.read_text()
