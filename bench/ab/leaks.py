"""Do a task's hidden tests leak into what the implementer sees?

The tasks' own self-check (`bench/ab/selfcheck.py`, `leaks(task_dir, repo=None) -> list[str]`)
is asked when it is there; this module's check holds besides, for any folder: a hidden test
file whose name or content is found in the starting repository (or in the work tree a trial
made of it) has leaked.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from pathlib import Path

# The verifier's entry is not a test: it names paths, not expectations.
_NOT_TESTS = frozenset({"test.sh"})


def _digest(path: Path) -> str:
    # Line endings and trailing space do not hide a copy.
    text = path.read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha256(b"\n".join(line.rstrip() for line in text.split(b"\n"))).hexdigest()


def _files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts
    )


def found_in(tests: Path, tree: Path) -> list[str]:
    """Each hidden test file of `tests` that `tree` holds by name or by content."""
    hidden = [p for p in _files(tests) if p.name not in _NOT_TESTS]
    names = {p.name: p for p in _files(tree)}
    contents = {_digest(p): p for p in names.values()}
    out = []
    for test in hidden:
        where = names.get(test.name) or contents.get(_digest(test))
        if where is not None:
            out.append(f"hidden test {test.name} leaks into {where.relative_to(tree)}")
    return out


def own_leaks(task_dir: Path) -> list[str]:
    return found_in(task_dir / "tests", task_dir / "environment" / "repo")


def _theirs() -> Callable[..., list[str]] | None:
    try:
        module = importlib.import_module("bench.ab.selfcheck")
    except ImportError:
        return None
    check = getattr(module, "leaks", None)
    return check if callable(check) else None


def leaks(task_dir: Path, tree: Path | None = None) -> list[str]:
    """The leaks into `tree` (the task's starting repository unless given, e.g. a trial's work
    tree): the tasks' self-check's findings (when it exists) and ours."""
    theirs = _theirs()
    where = tree if tree is not None else task_dir / "environment" / "repo"
    found = list(theirs(task_dir, where)) if theirs is not None else []
    return list(dict.fromkeys([*found, *found_in(task_dir / "tests", where)]))
