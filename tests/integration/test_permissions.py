"""A state file or directory we may not read or write is one line naming it and the fix, never
a traceback; an unreadable state.json is not corrupt, so nothing is moved aside."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex import regular
from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import payload, plan_body, run_hook_inproc
from tests.fakes.openai_server import FakeOpenAI

ROOT_USER = os.geteuid() == 0


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.fixture
def planned(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> Path:
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
    assert code == 0, out
    return project_dir(repo)


def denied(error_path: Path) -> PermissionError:
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(error_path))


@pytest.fixture
def unreadable_state(planned: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """state.json its reader may not open: mode 000, and for root (who ignores modes) the
    same refusal at the one read the store makes."""
    path = planned / "state.json"
    path.chmod(0)
    if ROOT_USER:
        # The store opens its files through one door (`regular.opened`: a regular file only).
        real = regular.opened

        def opened(where: Path, *args: int) -> int:
            if Path(where) == path:
                raise denied(path)
            return real(where, *args)

        monkeypatch.setattr(regular, "opened", opened)
    yield path
    path.chmod(0o600)


def test_an_unreadable_state_is_left_alone_and_named(
    unreadable_state: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "-C", str(repo), "status")
    assert code == 1
    assert out.count("\n") == 1, out
    assert f"permission denied on {unreadable_state}" in out and "chmod" in out
    assert "Traceback" not in out and "plan" not in out.split("permission")[1]
    assert unreadable_state.exists()
    assert not list(unreadable_state.parent.glob("state.json.corrupt-*"))


def test_a_hook_on_an_unreadable_state_does_not_block_or_move_it(
    unreadable_state: Path,
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    assert answer.code == 0
    assert answer.json.get("decision") != "block"
    assert "permission denied" in answer.stdout
    assert unreadable_state.exists()
    assert not list(unreadable_state.parent.glob("state.json.corrupt-*"))


def test_an_unwritable_state_directory_is_one_line(
    planned: Path, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    planned.chmod(0o500)
    if ROOT_USER:
        real = os.open

        def guarded(target: object, flags: int, *args: int, **kwargs: object) -> int:
            if str(target).startswith(str(planned)) and flags & os.O_CREAT:
                raise denied(Path(str(target)))
            return real(target, flags, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", guarded)
    try:
        code, out = run(capsys, "-C", str(repo), "stop")
    finally:
        planned.chmod(0o700)
    assert code == 1
    assert out.startswith("autopilot-codex: permission denied on ") and str(planned) in out
    assert out.count("\n") == 1 and "internal error" not in out


def test_a_broken_state_file_is_described_once(
    planned: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (planned / "state.json").write_text('{"goal": "unterminated')
    code, out = run(capsys, "-C", str(repo), "status")
    assert code == 1
    assert "Unterminated string starting at line 1" in out
    assert "at at" not in out
    assert list(planned.glob("state.json.corrupt-*"))
