"""The records' compiled methods kept between hook processes (`classcode`): the same classes as
compiled fresh, and a file that is not this user's own, plain and private to write is never
run. Each case runs in a fresh interpreter: installing patches that process's `dataclasses`.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from autopilot_codex import classcode
from tests.conftest import ROOT

BRIDGE = ROOT / "bridge"

# One process's life: install with the cache at argv[1], define records, save; what it saw.
PROBE = """
import json, sys
sys.path.insert(0, sys.argv[2])
from autopilot_codex import classcode
classcode.cache_path = lambda: sys.argv[1]
classcode.install()
import dataclasses

@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int = 2
    tags: tuple[str, ...] = ()

@dataclasses.dataclass
class Box:
    items: list[int] = dataclasses.field(default_factory=list)

p = Point(1)
frozen = False
try:
    p.x = 5
except dataclasses.FrozenInstanceError:
    frozen = True
box = Box()
box.items.append(1)
seen = {
    "repr": repr(p), "eq": p == Point(1, 2), "ne": p != Point(2), "hash": hash(p) == hash(Point(1)),
    "frozen": frozen, "box": repr(box), "fresh": Box().items,
    "loaded": len(classcode._loaded), "added": len(classcode._added),
}
classcode.save()
print(json.dumps(seen))
"""


def _life(cache: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(cache), str(BRIDGE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def test_the_second_process_takes_the_first_ones_code_and_gets_the_same_records(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "dataclass-code.bin"
    first = _life(cache)
    assert first["loaded"] == 0 and first["added"] > 0
    assert cache.is_file() and cache.stat().st_mode & 0o777 == 0o644
    second = _life(cache)
    assert second["loaded"] == first["added"] and second["added"] == 0
    behaviour = ("repr", "eq", "ne", "hash", "frozen", "box", "fresh")
    assert {k: second[k] for k in behaviour} == {k: first[k] for k in behaviour}
    assert first["repr"] == "Point(x=1, y=2, tags=())" and first["frozen"] is True


def _planted(cache: Path, marker: Path) -> None:
    """A cache whose every entry, run, makes `marker` instead of the method: an attacker's."""
    _life(cache)  # the texts a process of PROBE compiles, from a real first life
    texts = list(classcode._read(str(cache)))
    assert texts
    evil = compile(
        f"import os\nos.close(os.open({str(marker)!r}, os.O_CREAT | os.O_WRONLY))",
        "<string>",
        "exec",
    )
    cache.write_bytes(marshal.dumps(dict.fromkeys(texts, evil)))


def _life_over(cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(cache), str(BRIDGE)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_cache_others_may_write_is_never_run(tmp_path: Path) -> None:
    cache, marker = tmp_path / "dataclass-code.bin", tmp_path / "ran"
    for mode in (0o666, 0o620, 0o602):
        _planted(cache, marker)
        cache.chmod(mode)
        assert classcode._read(str(cache)) == {}
        assert _life_over(cache).returncode == 0  # (and its save replaced the file)
        assert not marker.exists()
    # Control: the same file, private, is taken (and the planted code runs).
    _planted(cache, marker)
    cache.chmod(0o644)
    assert classcode._read(str(cache)) != {}
    _life_over(cache)
    assert marker.exists()


def test_a_link_to_a_cache_is_never_followed(tmp_path: Path) -> None:
    real, marker = tmp_path / "real.bin", tmp_path / "ran"
    _planted(real, marker)
    real.chmod(0o644)
    link = tmp_path / "dataclass-code.bin"
    link.symlink_to(real)
    assert classcode._read(str(link)) == {}
    assert _life_over(link).returncode == 0
    assert not marker.exists()


def test_a_corrupt_or_foreign_cache_compiles_as_if_there_were_none(tmp_path: Path) -> None:
    cache = tmp_path / "dataclass-code.bin"
    for data in (b"", b"\x00garbage", marshal.dumps([1, 2]), b"{}"):
        cache.write_bytes(data)
        cache.chmod(0o644)
        assert classcode._read(str(cache)) == {}
    mixed = {"text": 1, 2: compile("pass", "<string>", "exec")}
    cache.write_bytes(marshal.dumps(mixed))
    assert classcode._read(str(cache)) == {}
    seen = _life(cache)  # and a process over it defines its records as always
    assert seen["loaded"] == 0 and seen["repr"] == "Point(x=1, y=2, tags=())"


def test_a_folder_that_cannot_be_written_keeps_nothing_and_breaks_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):  # root writes anywhere: nothing to show here
            return
        seen = _life(folder / "dataclass-code.bin")
        assert seen["added"] > 0 and not list(folder.iterdir())
    finally:
        folder.chmod(0o700)
