"""Issue 35: no module of the bridge over 400 lines (one small module per noun)."""

from __future__ import annotations

from pathlib import Path

import autopilot_codex

LIMIT = 400
PACKAGE = Path(autopilot_codex.__file__).resolve().parent


def test_no_module_of_the_bridge_is_over_the_limit() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 100  # the package was found
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
