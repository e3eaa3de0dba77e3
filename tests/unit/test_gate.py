"""The gate: which hooks reach the engine, decided with os, sys and json only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.gate import admit
from autopilot_codex.paths import active_dir, active_marker, find_worktree
from tests.conftest import ROOT, make_repo


def mark(worktree: Path, session: str | None) -> Path:
    marker = active_marker(worktree)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"worktree": str(find_worktree(worktree)), "session_id": session}))
    return marker


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
    admitted = admit(hook(repo / "sub" if (repo / "sub").mkdir() is None else repo))
    assert admitted is not None and admitted.worktree == str(repo.resolve())
    assert admit(hook(repo, "s2")) is None
    mark(repo, None)
    assert admit(hook(repo, "s2")) is not None


def test_a_damaged_marker_falls_back_to_the_key(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1").write_text("{torn")
    assert admit(hook(repo, "anyone")) is not None
    (active_dir() / ".leftover.tmp").write_text("{")
    assert admit(hook(make_repo(tmp_path / "other"))) is None


def test_garbage_payload_uses_the_process_cwd(tmp_path: Path, monkeypatch) -> None:
    repo = make_repo(tmp_path / "r")
    mark(repo, "s1")
    monkeypatch.chdir(repo)
    assert admit(b"\xff not json") is not None


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
            {"worktree": str(find_worktree(repo)), "session_id": None, "style": "rounds", "owner": "driver"}
        )
    )
    admitted = admit(hook(repo, "round-7"))
    assert admitted is not None and admitted.style == "rounds"
    data = json.loads(marker.read_text())
    marker.write_text(json.dumps({**data, "owner": "session", "session_id": "s1"}))
    assert admit(hook(repo, "round-7")) is None


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
]


@pytest.mark.parametrize("raw", SAMPLES)
def test_the_gates_parser_answers_as_json_loads_does(raw: bytes) -> None:
    import math

    from autopilot_codex.gate import loads

    try:
        expected: object = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        with pytest.raises((ValueError, UnicodeDecodeError)):
            loads(raw)
        assert exc is not None
        return
    got = loads(raw)
    if isinstance(expected, dict) and any(isinstance(v, float) and math.isnan(v) for v in expected.values()):
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
