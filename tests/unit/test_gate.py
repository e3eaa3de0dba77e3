"""The gate: which hooks reach the engine, decided with os, sys and json only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.gate import admit, helped
from autopilot_codex.paths import (
    active_dir,
    active_marker,
    find_worktree,
    rails_marker,
    state_home_str,
)
from tests.conftest import ROOT, make_repo


def mark(worktree: Path, session: str | None) -> Path:
    """Both indexes, as the store writes them; returns the active one."""
    text = json.dumps({"worktree": str(find_worktree(worktree)), "session_id": session})
    for marker in (rails_marker(worktree), active_marker(worktree)):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(text)
    return active_marker(worktree)


def hook(cwd: Path, session: str = "s1") -> bytes:
    return json.dumps({"cwd": str(cwd), "session_id": session}).encode()


def test_no_marker_no_entry(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    assert admit(hook(repo)) is None


def test_marker_of_another_worktree_is_not_ours(tmp_path: Path) -> None:
    mark(make_repo(tmp_path / "other"), None)
    assert admit(hook(make_repo(tmp_path / "r"))) is None


def test_owner_and_unclaimed_are_admitted_other_sessions_not(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    admitted = admit(hook(repo / "sub" if (repo / "sub").mkdir() is None else repo), "Stop")  # type: ignore[func-returns-value]
    assert admitted is not None and admitted.worktree == str(repo.resolve())
    assert admit(hook(repo, "s2"), "Stop") is None
    # Every session gets the rails, owner or not.
    assert admit(hook(repo, "s2"), "PreToolUse") is not None
    # An owned loop has nothing for a prompt to claim, not even its owner's.
    assert admit(hook(repo, "s1"), "UserPromptSubmit") is None
    # An unowned loop hears only a typed prompt (its claim) and the rails.
    mark(repo, None)
    assert admit(hook(repo, "s2"), "Stop") is None
    assert admit(hook(repo, "s2"), "PostToolUse") is None
    assert admit(hook(repo, "s2"), "UserPromptSubmit") is not None
    assert admit(hook(repo, "s2"), "PreToolUse") is not None


@pytest.mark.parametrize("inner", ["sub/.git", "vendor/lib/.git", "a/b/c"])
def test_the_loop_is_found_by_containment_not_by_the_nearest_git(
    tmp_path: Path, inner: str
) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    (repo / inner).mkdir(parents=True)
    cwd = repo / inner if not inner.endswith(".git") else (repo / inner).parent
    admitted = admit(hook(cwd), "Stop")
    assert admitted is not None and admitted.worktree == str(repo.resolve())


def test_the_deepest_guarded_worktree_wins(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "r")
    inner = make_repo(outer / "vendor" / "x")
    mark(outer, "s1")
    mark(inner, "s1")
    admitted = admit(hook(inner / "src" if (inner / "src").mkdir() is None else inner), "Stop")  # type: ignore[func-returns-value]
    assert admitted is not None and admitted.worktree == str(inner.resolve())
    admitted = admit(hook(outer), "Stop")
    assert admitted is not None and admitted.worktree == str(outer.resolve())


def test_a_sibling_with_a_common_prefix_is_not_contained(tmp_path: Path) -> None:
    mark(make_repo(tmp_path / "r"), "s1")
    assert admit(hook(make_repo(tmp_path / "r2")), "PreToolUse") is None


def test_a_marker_left_in_one_index_still_guards_and_asks_for_repair(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1").unlink()
    admitted = admit(hook(repo, "someone-else"), "Stop")
    assert admitted is not None and admitted.repair
    mark(repo, "s1")
    rails_marker(repo).unlink()
    admitted = admit(hook(repo, "s2"), "PreToolUse")
    assert admitted is not None and admitted.repair


def test_a_damaged_marker_falls_back_to_the_key(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1").write_text("{torn")
    rails_marker(repo).write_text("{torn")
    admitted = admit(hook(repo, "anyone"))
    assert admitted is not None and admitted.repair
    (active_dir() / ".leftover.tmp").write_text("{")
    assert admit(hook(make_repo(tmp_path / "other"))) is None


def test_a_damaged_marker_is_found_from_a_subfolder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1").write_text("{torn")
    rails_marker(repo).write_text("{torn")
    (repo / "src" / "deep").mkdir(parents=True)
    admitted = admit(hook(repo / "src" / "deep", "anyone"))
    assert admitted is not None and admitted.repair
    assert admitted.worktree == str(repo.resolve())


def test_a_missing_index_folder_leaves_the_other_index_guarding(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    shutil.rmtree(active_dir())
    admitted = admit(hook(repo, "anyone"), "PreToolUse")
    assert admitted is not None and admitted.repair


def test_leftover_temporary_files_do_not_hide_a_marker(tmp_path: Path) -> None:
    # A write interrupted between its temporary file and the rename leaves `.name.tmp` behind.
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    rails_marker(repo).unlink()
    for n in range(50):
        (active_dir() / f".{n:02d}.tmp").write_text("{")
    admitted = admit(hook(repo, "anyone"), "PreToolUse")
    assert admitted is not None and admitted.worktree == str(repo.resolve())


def test_a_torn_copy_does_not_hide_the_good_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    marker = mark(repo, "s1")
    good = {"worktree": str(find_worktree(repo)), "session_id": "s1", "style": "ralph"}
    rails_marker(repo).write_text(json.dumps(good))
    marker.write_text("{torn")
    admitted = admit(hook(repo, "s1"), "Stop")
    assert admitted is not None and admitted.repair and admitted.style == "ralph"


def test_a_late_hook_from_a_worktree_removed_from_disk_is_no_loop(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    gone = repo.resolve()
    shutil.rmtree(repo)
    assert admit(hook(gone, "s1"), "Stop") is None
    assert admit(hook(gone / "src", "s1"), "PreToolUse") is None


def test_with_the_helper_turned_off_a_hook_never_reaches_or_starts_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    admitted = admit(hook(repo, "s1"), "Stop")
    assert admitted is not None
    monkeypatch.setenv("AUTOPILOT_CODEX_HELPER", "0")
    assert helped(["Stop", "--host", "claude"], admitted) is None
    assert not (Path(state_home_str()) / "run").exists()  # no helper was started


@pytest.mark.parametrize("deeper_in", ["active", "rails"])
def test_of_two_copies_that_disagree_the_deepest_worktree_wins_in_either_index(
    tmp_path: Path, deeper_in: str
) -> None:
    """A pair edited apart names two worktrees: the rule is the one for two loops (the deepest
    that holds the hook's folder guards it), not which index is read first."""
    repo = make_repo(tmp_path / "r")
    (repo / "sub").mkdir()
    mark(repo, "s1")
    deeper = {"worktree": str(repo.resolve() / "sub"), "session_id": "s1", "style": "ralph"}
    (active_marker(repo) if deeper_in == "active" else rails_marker(repo)).write_text(
        json.dumps(deeper)
    )
    admitted = admit(hook(repo / "sub", "s1"), "Stop")
    assert admitted is not None and admitted.repair
    assert admitted.worktree == deeper["worktree"] and admitted.style == "ralph"


@pytest.mark.parametrize("style", [5, ["ralph"], ""])
def test_a_marker_style_that_is_not_a_name_is_an_autopilot_loop(
    tmp_path: Path, style: object
) -> None:
    repo = make_repo(tmp_path / "r")
    text = json.dumps({"worktree": str(find_worktree(repo)), "session_id": "s1", "style": style})
    for copy in (rails_marker(repo), mark(repo, "s1")):
        copy.write_text(text)
    admitted = admit(hook(repo, "s1"), "Stop")
    assert admitted is not None and admitted.style == "autopilot"


@pytest.mark.parametrize("owner", ["", 7])
def test_a_marker_owner_that_is_not_a_session_leaves_the_loop_unowned(
    tmp_path: Path, owner: object
) -> None:
    repo = make_repo(tmp_path / "r")
    text = json.dumps({"worktree": str(find_worktree(repo)), "session_id": owner})
    for copy in (rails_marker(repo), mark(repo, None)):
        copy.write_text(text)
    assert admit(hook(repo, "s2"), "UserPromptSubmit") is not None
    assert admit(hook(repo, "s2"), "Stop") is None


@pytest.mark.parametrize("cwd", [7, ["/"], {"path": "/"}])
def test_a_cwd_that_is_not_a_path_uses_the_process_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cwd: object
) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    monkeypatch.chdir(repo)
    raw = json.dumps({"cwd": cwd, "session_id": "s2"}).encode()
    admitted = admit(raw, "PreToolUse")
    assert admitted is not None and admitted.worktree == str(repo.resolve())


def test_garbage_payload_uses_the_process_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    monkeypatch.chdir(repo)
    assert admit(b"\xff not json", "PreToolUse") is not None


def test_the_gate_imports_no_pathlib_hashlib_or_typing() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from autopilot_codex.gate import admit\n"
        'admit(b\'{"cwd": "/"}\')\n'
        "print(sorted(m for m in ('pathlib', 'hashlib', 'typing', 'dataclasses', 'json', 're', 'enum', 'site') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, str(ROOT / "bridge")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "[]"


def test_a_driver_owned_loop_admits_every_session_with_its_style(tmp_path: Path) -> None:
    # A rounds driver starts a fresh host session per round: each must get the rails.
    repo = make_repo(tmp_path / "r")
    marker = mark(repo, "driver-session")
    marker.write_text(
        json.dumps(
            {
                "worktree": str(find_worktree(repo)),
                "session_id": None,
                "style": "rounds",
                "owner": "driver",
            }
        )
    )
    rails_marker(repo).write_text(marker.read_text())
    admitted = admit(hook(repo, "round-7"), "Stop")
    assert admitted is not None and admitted.style == "rounds"
    data = json.loads(marker.read_text())
    for copy in (marker, rails_marker(repo)):
        copy.write_text(json.dumps({**data, "owner": "session", "session_id": "s1"}))
    assert admit(hook(repo, "round-7"), "Stop") is None


def test_a_marker_without_a_style_is_an_autopilot_loop(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    admitted = admit(hook(repo, "s1"))
    assert admitted is not None and admitted.style == "autopilot"


SAMPLES = [
    b'{"cwd": "/tmp", "session_id": "s"}',
    b'  \n{"a": [1, 2.5, -3e2, null, true, false], "b": {"c": "\\u00e9\\n"}}\n',
    b'{"x": NaN, "y": Infinity, "z": -Infinity}',
    b"[]",
    b'"just a string"',
    '{"k": "caf\u00e9"}'.encode(),
    '{"k": 1}'.encode("utf-16"),
    b'{"k": 1} trailing',
    b"{not json",
    b"",
    b"\xff\xfe garbage",
    b'{"k": 1}{"k": 2}',
    b'\xef\xbb\xbf{"k": 1}',
    b'{"k": "a\tb"}',  # a raw control character in a string: json.loads refuses it
]


@pytest.mark.parametrize("raw", SAMPLES)
def test_the_gates_parser_answers_as_json_loads_does(raw: bytes) -> None:
    import math

    from autopilot_codex.loopindex import loads

    try:
        expected: object = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        with pytest.raises((ValueError, UnicodeDecodeError)):
            loads(raw)
        assert exc is not None
        return
    got = loads(raw)
    if isinstance(expected, dict) and any(
        isinstance(v, float) and math.isnan(v) for v in expected.values()
    ):
        assert isinstance(got, dict) and math.isnan(got["x"]) and got["y"] == math.inf
        return
    assert got == expected


def test_an_admitted_hook_started_without_site_still_reaches_the_engine(tmp_path: Path) -> None:
    # The launcher starts hooks with `python -S`; the engine needs the environment's packages.
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from autopilot_codex import gate\n"
        "gate._late_site()\n"
        "import pydantic, openai\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, str(ROOT / "bridge")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "ok"


def test_a_removed_process_cwd_is_no_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert admit(b"{}", "PreToolUse") is None
