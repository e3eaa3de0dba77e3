"""A hook whose cwd is anywhere inside a guarded worktree is that loop's hook, whatever `.git`
lies between (issue: one `cd` into `mkdir -p sub/.git` switched every hook off). Every session
there gets the rails, owner or not. Through the real launcher, as the host runs hooks.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from autopilot_codex.paths import INDEXES, active_dir, active_marker, state_home
from tests.conftest import git, make_repo, payload, run_launcher
from tests.reliability.conftest import SESSION, state_of


def launch(event: str, data: dict[str, object], cwd: Path) -> dict[str, object]:
    out = run_launcher(["hook", event, "--host", "claude"], json.dumps(data).encode(), cwd=cwd)
    assert out.code == 0, out.stderr
    return json.loads(out.stdout) if out.stdout.strip() else {}


def bash(cwd: Path, command: str, session: str = SESSION) -> dict[str, object]:
    data = payload("PreToolUse", cwd, session, tool_name="Bash", tool_input={"command": command})
    return launch("PreToolUse", data, cwd)


def denied(answer: dict[str, object]) -> bool:
    specific = answer.get("hookSpecificOutput")
    return isinstance(specific, dict) and specific.get("permissionDecision") == "deny"


def nested_git_dir(repo: Path) -> Path:
    (repo / "sub" / ".git").mkdir(parents=True)
    return repo / "sub"


def nested_clone(repo: Path) -> Path:
    source = make_repo(repo.parent / "upstream")
    subprocess.run(["git", "clone", "-q", str(source), str(repo / "vendor" / "lib")], check=True)
    return repo / "vendor" / "lib"


def nested_init(repo: Path) -> Path:
    # What a submodule's checkout looks like to a walk up for `.git`: a repository of its own.
    return make_repo(repo / "modules" / "part")


def plain_subfolder(repo: Path) -> Path:
    (repo / "src" / "deep").mkdir(parents=True)
    return repo / "src" / "deep"


def linked_worktree_inside(repo: Path) -> Path:
    git(repo, "worktree", "add", "-q", str(repo / "wt-inside"), "-b", "side")
    return repo / "wt-inside"


PLACES = [nested_git_dir, nested_clone, nested_init, plain_subfolder, linked_worktree_inside]


@pytest.mark.parametrize("place", PLACES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("session", [SESSION, "another-session"], ids=["owner", "not-owner"])
def test_the_rails_hold_anywhere_inside_the_worktree(
    planned: Path, place: object, session: str
) -> None:
    assert callable(place)
    inner = place(planned)
    assert denied(bash(inner, "git push --force origin main", session))
    assert denied(bash(inner, "git -C .. push --force origin main", session))
    # A harmless command there is still allowed.
    assert not denied(bash(inner, "git status && ls", session))


@pytest.mark.parametrize("place", PLACES, ids=lambda f: f.__name__)
def test_the_owners_loop_events_reach_the_loop_from_inside(planned: Path, place: object) -> None:
    assert callable(place)
    inner = place(planned)
    before = state_of(planned)["tool_events"]
    launch("PostToolUse", payload("PostToolUse", inner, tool_name="Read"), inner)
    assert state_of(planned)["tool_events"] == before + 1


def test_a_cd_inside_the_command_does_not_switch_the_rails_off(planned: Path) -> None:
    # The hook's cwd is the session's; the command moves elsewhere inside and pushes from there.
    nested_git_dir(planned)
    assert denied(
        bash(planned, "mkdir -p sub/.git && cd sub && git -C .. push --force origin main")
    )
    assert denied(bash(planned, "cd sub; git push -f origin main"))


def test_a_sibling_repository_with_the_same_prefix_is_not_guarded(
    planned: Path, tmp_path: Path
) -> None:
    sibling = make_repo(tmp_path / (planned.name + "-other"))
    assert not denied(bash(sibling, "git push --force origin main", "someone"))
    assert launch("Stop", payload("Stop", sibling), sibling) == {}


def test_other_sessions_do_not_drive_the_loop(planned: Path) -> None:
    before = state_of(planned)
    launch("PostToolUse", payload("PostToolUse", planned, "another", tool_name="Read"), planned)
    launch("Stop", payload("Stop", planned, "another"), planned)
    assert state_of(planned) == before


def test_a_planted_marker_for_a_subfolder_does_not_shadow_the_loop(planned: Path) -> None:
    sub = nested_git_dir(planned)
    planted = {"worktree": str(sub.resolve()), "session_id": "nested", "style": "autopilot"}
    (active_dir() / "planted-0123").write_text(json.dumps(planted))
    before = state_of(planned)["tool_events"]
    # The real loop (its marker in both indexes) still hears its owner from the subfolder...
    launch("PostToolUse", payload("PostToolUse", sub, tool_name="Read"), sub)
    assert state_of(planned)["tool_events"] == before + 1
    assert denied(bash(sub, "git push --force origin main", "nested"))
    # ...and the planted marker is never copied into the second index.
    assert active_marker(planned).exists()
    assert not (state_home() / INDEXES[1] / "planted-0123").exists()
