"""The price table the user is shown (docs/pricing.md) is the one the budget charges: every row,
every figure, in both directions."""

from __future__ import annotations

import re

from autopilot_codex.manager.pricing import TABLE, Price
from tests.conftest import ROOT


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _figures(cell: str) -> list[float]:
    return [float(x) for x in re.sub(r"\(.*?\)", "", cell).split("/")]


def _models(cell: str) -> list[str]:
    """`gpt-5.4 / -mini / -nano` names three rows; `a, b` two; `(default)` is a note."""
    cell = re.sub(r"\(.*?\)", "", cell)
    names: list[str] = []
    for part in cell.split(","):
        base, *suffixes = [p.strip() for p in part.split("/")]
        names += [base, *(base + s for s in suffixes)]
    return names


def published() -> dict[str, Price]:
    text = (ROOT / "docs" / "pricing.md").read_text(encoding="utf-8")
    rows: dict[str, Price] = {}
    for line in text.splitlines():
        if not line.startswith("| gpt-"):
            continue
        model, inputs, cached, outputs, _source = _cells(line)
        names = _models(model)
        columns = [_figures(c) for c in (inputs, cached, outputs)]
        for i, name in enumerate(names):
            rows[name] = Price(*(c[i] if len(c) > 1 else c[0] for c in columns))
    return rows


def test_the_published_prices_are_the_charged_prices() -> None:
    rows = published()
    assert len(rows) > 10  # the table was read, not skipped
    assert rows == TABLE
