"""The suite measures coverage inside the hooks' and workers' processes; nothing of that may reach
what `install` ships.

Measurement is started by the coverage package's own .pth file, present only where coverage is
installed (the test venv: it is a test dependency), and only when the test run sets
COVERAGE_PROCESS_CONFIG. The bridge, the launcher and the hooks files know nothing of it, and
the launcher's isolated start (-I, and -S for hooks) stays as it is.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LAUNCHER, ROOT

SHIPPED = ("bridge", "bin", "hooks")


def test_coverage_is_a_test_dependency_only() -> None:
    import tomllib  # Python 3.11+, as the suite's other pyproject readers

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = [*project["dependencies"], (ROOT / "bridge" / "requirements.txt").read_text()]
    assert not [d for d in runtime if "coverage" in d.lower() or "pytest" in d.lower()]
    assert any(d.startswith("coverage") for d in project["optional-dependencies"]["test"])


def test_nothing_shipped_starts_or_names_coverage() -> None:
    named = [
        str(path.relative_to(ROOT))
        for folder in SHIPPED
        for path in (ROOT / folder).rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and ".egg-info" not in str(path)
        and b"coverage" in _passed_through(path).lower()
    ]
    assert named == []


def _passed_through(path: Path) -> bytes:
    """The file's text, less the one name the resident helper keeps in its environment so the
    suite can measure it: passing a variable through starts nothing."""
    text = path.read_bytes()
    if path == ROOT / "bridge" / "autopilot_codex" / "helper.py":
        text = text.replace(b'"COVERAGE_PROCESS_CONFIG"', b"", 1)
    return text


def test_the_hooks_still_start_isolated_and_without_site() -> None:
    launcher = LAUNCHER.read_text()
    assert 'exec "$python" -I -S "$root/bridge/autopilot_codex_main.py" "$@"' in launcher
    assert 'exec "$python" -I "$root/bridge/autopilot_codex_main.py" "$@"' in launcher
