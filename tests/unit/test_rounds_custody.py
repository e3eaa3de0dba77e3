"""The driver's custody: the rollout under its digest, the handoff's objective rendered anew."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.rounds import rollout
from autopilot_codex.rounds.custody import (
    DIGEST,
    Custody,
    objective_of,
    restore_objective,
    sha256,
)


def header(goal: str = "goal") -> rollout.RunHeader:
    return rollout.RunHeader("run", "r1", goal, "claude", 10, "h.md", "sha", 1.0)


def opened(tmp_path: Path) -> Custody:
    custody = Custody(tmp_path / "rounds")
    assert custody.open(resume=False) == ([], "")
    custody.append(header())
    return custody


def test_every_write_carries_its_digest(tmp_path: Path) -> None:
    custody = opened(tmp_path)
    custody.append(rollout.RunEnd("end", "r1", "complete", 2.0))
    digest = json.loads((tmp_path / "rounds" / DIGEST).read_text())
    assert digest == {"sha256": sha256(custody.path.read_bytes())}
    runs, wrong = Custody(tmp_path / "rounds").open(resume=True)
    assert wrong == "" and runs[0].end is not None


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda c: c.path.write_bytes(c.path.read_bytes().replace(b"goal", b"evil")), "changed"),
        (lambda c: c.digest_path.unlink(), "has no digest"),
        (lambda c: c.digest_path.write_text("{not json"), "has no digest"),
        (lambda c: c.path.unlink(), "was removed"),
    ],
    ids=["edited", "digest-removed", "digest-damaged", "removed"],
)
def test_resume_refuses_what_the_driver_did_not_write(
    tmp_path: Path, damage: Callable[[Custody], object], said: str
) -> None:
    damage(opened(tmp_path))
    with pytest.raises(BridgeError, match=said) as caught:
        Custody(tmp_path / "rounds").open(resume=True)
    assert "refusing to resume" in str(caught.value)


def test_restore_puts_back_the_drivers_bytes_and_says_so(tmp_path: Path) -> None:
    custody = opened(tmp_path)
    kept = custody.path.read_bytes()
    assert custody.restore() is False
    custody.path.write_text("forged\n")
    assert custody.restore() is True
    assert custody.path.read_bytes() == kept
    target = tmp_path / "elsewhere"
    target.write_bytes(kept)
    custody.path.unlink()
    custody.path.symlink_to(target)
    assert custody.restore() is True and not custody.path.is_symlink()


def test_restoring_the_objective_keeps_the_notes(tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_text(objective_of("the goal") + "round 1: did a thing\n")
    assert restore_objective(tmp_path, "h.md", "the goal") is False
    path.write_text(path.read_text().replace("the goal", "another goal"))
    assert restore_objective(tmp_path, "h.md", "the goal") is True
    assert path.read_text() == objective_of("the goal") + "round 1: did a thing\n"
    path.unlink()
    assert restore_objective(tmp_path, "h.md", "the goal") is True
    assert path.read_text() == objective_of("the goal")


def test_a_handoff_replaced_by_a_link_is_written_anew_never_through_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("the user's own notes\n")
    (tmp_path / "h.md").symlink_to(outside)
    assert restore_objective(tmp_path, "h.md", "the goal") is True
    assert outside.read_text() == "the user's own notes\n"
    assert not (tmp_path / "h.md").is_symlink()
    assert (tmp_path / "h.md").read_text() == objective_of("the goal")
