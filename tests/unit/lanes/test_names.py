"""Attack first: a task id the manager wrote cannot leave the lanes' ref namespace, name a
folder outside the run's, or share a branch with another id."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes.names import NAME_CHARS_MAX, component, fits, original
from autopilot_codex.lanes.worktrees import integration_branch, lane_branch

HOSTILE = ["../x", "a b", "refs/heads/main", ".", "..", "x.lock", "@{-1}", "a/../../b", "-rf",
           "HEAD", "T1", "t1", "a+2fb", "a/b", "~^:?*[\\", "\n", "é", "\ud800"]  # fmt: skip


def _valid_ref(name: str) -> bool:
    done = subprocess.run(["git", "check-ref-format", f"refs/heads/{name}"], check=False)
    return done.returncode == 0


@pytest.mark.parametrize("task_id", HOSTILE)
def test_a_hostile_id_stays_one_component_under_the_run(task_id: str) -> None:
    branch = lane_branch("run-1", task_id)
    assert branch.startswith("autopilot/run-1/task/")
    name = branch.removeprefix("autopilot/run-1/task/")
    assert "/" not in name and name not in (".", "..") and not name.startswith(".")
    assert _valid_ref(branch)


def test_hostile_ids_never_share_a_name_even_ignoring_case() -> None:
    names = [component(x) for x in HOSTILE]
    assert len({n.casefold() for n in names}) == len(HOSTILE)


def test_an_empty_or_too_long_id_is_refused() -> None:
    with pytest.raises(BridgeError, match="non-empty"):
        lane_branch("run", "")
    with pytest.raises(BridgeError, match="too long"):
        lane_branch("run", "x" * (NAME_CHARS_MAX + 1))
    with pytest.raises(BridgeError, match="too long"):
        lane_branch("run", "é" * (NAME_CHARS_MAX // 6 + 1))


def test_the_run_is_escaped_the_same_way() -> None:
    assert integration_branch("../main") == "autopilot/+2e+2e+2fmain/integration"
    assert lane_branch("A", "b") == "autopilot/+41/task/b"


@pytest.mark.parametrize("name", ["+", "+4", "+zz", "A", "a b", "+ff", "+c3", "", "+2B", "+61"])
def test_a_name_no_id_makes_reads_as_none(name: str) -> None:
    assert original(name) is None


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_every_id_reads_back_and_is_a_valid_ref(task_id: str) -> None:
    if not fits(task_id):  # 30 characters of 4 bytes each escape to 360
        with pytest.raises(BridgeError, match="too long"):
            component(task_id)
        return
    name = component(task_id)
    decodable = task_id.encode("utf-8", "surrogatepass")
    try:
        decodable.decode("utf-8")
    except UnicodeDecodeError:
        assert original(name) is None  # a lone surrogate: never a name read back wrongly
        return
    assert original(name) == task_id
    assert name == name.lower()  # one name on a file system that ignores case


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_git_accepts_every_name(task_id: str) -> None:
    assert _valid_ref(lane_branch("r", task_id))
