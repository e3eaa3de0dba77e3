"""A likely check for a project, to propose to the user. Nothing here runs anything.

`plan` shows the proposal; it becomes a check only when the user passes it back with
`--check` or writes it into the config. Reads a few files at the worktree's top level only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# `npm init` writes this script; proposing it would propose a check that always fails.
_NPM_PLACEHOLDER = "no test specified"
# After a rule's colon, what makes it an assignment instead (`test := 1`, `test ::= 1`).
_ASSIGNS = re.compile(r"[=:]?=")
_MAX_READ = 256 * 1024
# How deep to look for test files under a tests directory before giving up.
_SCAN_LIMIT = 2_000


def detect_check(worktree: Path) -> str | None:
    """The command most likely to be this project's tests, or None.

    A Makefile's own `test` target comes first: where a project has one, it is how the project
    means its tests to be run. Then one ecosystem each.
    """
    for detect in (_make, _cargo, _go, _node, _python):
        found = detect(worktree)
        if found:
            return found
    return None


def _read(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        with path.open("rb") as handle:
            return handle.read(_MAX_READ).decode("utf-8", "replace")
    except OSError:
        return None


def _make(root: Path) -> str | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        text = _read(root / name)
        if text is not None and any(_names_test(line) for line in text.split("\n")):
            return "make test"
    return None


def _names_test(line: str) -> bool:
    """A rule with `test` among its targets; not `test := value`, not `.PHONY: test`.

    Read word by word, once: the pattern it replaces (`^(?:[^:#=\\s]+[ \\t]+)*test...:`) tried
    every count of targets before `test`, each with a scan of the rest of the line, the square
    of a Makefile's longest line."""
    colon = line.find(":")
    targets = line[:colon]
    if colon < 0 or _ASSIGNS.match(line, colon + 1) or targets[:1] in ("", " ", "\t"):
        return False
    if any(c in "#=" or (c.isspace() and c not in " \t") for c in targets):
        return False
    return "test" in targets.replace("\t", " ").split(" ")


def _cargo(root: Path) -> str | None:
    return "cargo test" if (root / "Cargo.toml").is_file() else None


def _go(root: Path) -> str | None:
    return "go test ./..." if (root / "go.mod").is_file() else None


def _node(root: Path) -> str | None:
    text = _read(root / "package.json")
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or _NPM_PLACEHOLDER in test:
        return None
    if (root / "pnpm-lock.yaml").is_file():
        return "pnpm test"
    if (root / "yarn.lock").is_file():
        return "yarn test"
    return "npm test"


def _python(root: Path) -> str | None:
    configured = (
        (root / "pytest.ini").is_file()
        or "[tool.pytest" in (_read(root / "pyproject.toml") or "")
        or "[tool:pytest]" in (_read(root / "setup.cfg") or "")
        or "[pytest]" in (_read(root / "tox.ini") or "")
    )
    if not configured and not _has_python_tests(root):
        return None
    # The project's own virtual environment, when it has one where tools look for it.
    python = ".venv/bin/python" if (root / ".venv" / "bin" / "python").exists() else "python3"
    return f"{python} -m pytest -q"


def _has_python_tests(root: Path) -> bool:
    """A test module at the top level or under tests/ (or test/), looked for in bounded time."""
    if any(root.glob("test_*.py")):
        return True
    seen = 0
    for name in ("tests", "test"):
        folder = root / name
        if not folder.is_dir():
            continue
        for path in folder.rglob("*.py"):
            seen += 1
            if path.name.startswith("test_") or path.name.endswith("_test.py"):
                return True
            if seen > _SCAN_LIMIT:
                return False
    return False
