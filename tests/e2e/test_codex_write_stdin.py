"""Codex's `write_stdin`, on the real CLI: a channel no hook judges.

`exec_command` with `tty: true` leaves its process running and answers with a session id;
`write_stdin` types into that process, and Codex fires no hook for it. A bare `bash` started
that way, then fed a command, ran what no rail read. The rails deny a shell left reading its
standard input (`unreadable`), so there is no session to type into.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex.commands import install
from autopilot_codex.hosts.codex.boundary import boundary_overrides, prepare_worktree
from autopilot_codex.wall import check_wall_prereqs

from .autopilot_helpers import Autopilot
from .codex_fixtures import CodexRunner
from .fake_codex_model import Call, FakeCodexModel, Turn
from .test_wall_e2e import KEY, Scene
from .test_wall_e2e import scene as scene  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
PROMPT = "Append a line to notes.txt."
_SESSION = re.compile(r"session ID (\d+)")


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Iterator[Autopilot]:
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def test_codex_a_bare_shell_for_write_stdin_to_type_into_is_denied(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, git_repo: Path
) -> None:
    started = ap.cli(
        "ralph",
        "--host",
        "codex",
        "--max-iterations",
        "1",
        "--budget",
        "100",
        PROMPT,
        openai_url=NO_MANAGER,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    typed = "touch typed-unjudged.txt\n"
    calls = {"typed": False}

    def chooser(raw: str, headers: dict[str, str]) -> Turn | None:
        if '"function_call_output"' not in raw:
            return Call("exec_command", {"cmd": "bash", "tty": True, "yield_time_ms": 500})
        found = _SESSION.findall(raw)
        if found and not calls["typed"]:
            calls["typed"] = True
            return Call(
                "write_stdin",
                {"session_id": int(found[-1]), "chars": typed, "yield_time_ms": 1000},
            )
        return "Done."

    fake_codex.chooser = chooser
    run = codex(PROMPT, extra_env=ap.env(NO_MANAGER))
    assert run.ok, run.describe()
    assert not (git_repo / "typed-unjudged.txt").exists(), "write_stdin ran unjudged"
    assert not calls["typed"]
    assert "[unreadable]" in fake_codex.model_requests[1].raw


def test_codex_walled_no_program_keeps_a_terminal_for_write_stdin(
    codex: CodexRunner, fake_codex: FakeCodexModel, scene: Scene
) -> None:
    """A program the rails cannot name as a reader of commands (`xargs` naming its program,
    an editor's `:!`, a pager's `!`) still takes what `write_stdin` types, later, unread: the
    wall takes the terminal away (`features.unified_exec_tty=false`), so `exec_command` keeps
    no session with an open standard input whatever it starts."""
    if not check_wall_prereqs().ok:
        pytest.skip("the hosts' sandbox needs its tools (bubblewrap, socat)")
    spec = scene.spec()
    prepare_worktree(spec)
    calls = {"typed": False}

    def chooser(raw: str, headers: dict[str, str]) -> Turn | None:
        if '"function_call_output"' not in raw:
            return Call(
                "exec_command", {"cmd": "xargs -I{} touch {}", "tty": True, "yield_time_ms": 500}
            )
        found = _SESSION.findall(raw)
        if found and not calls["typed"]:
            calls["typed"] = True
            return Call(
                "write_stdin",
                {
                    "session_id": int(found[-1]),
                    "chars": "typed-unread.txt\n",
                    "yield_time_ms": 1000,
                },
            )
        return "Done."

    fake_codex.chooser = chooser
    extra_args = [arg for item in boundary_overrides(spec) for arg in ("-c", item)]
    run = codex("work", extra_args=extra_args, extra_env={"OPENAI_API_KEY": KEY})
    assert run.ok, run.describe()
    assert not (scene.repo / "typed-unread.txt").exists(), "write_stdin reached a walled program"
    assert not calls["typed"]
