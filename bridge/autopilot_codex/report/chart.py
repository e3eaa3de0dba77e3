"""The spend of each meter over time, as inline SVG drawn offline by pygal, with no script.

pygal always embeds a small script of its own (its tooltips' config); the page must run none,
so the chart is taken as an element tree and every script element is dropped before it is
serialised. The series names and numbers are the report's own, never the loop's text.
"""

from __future__ import annotations

import calendar
import time
from xml.etree import ElementTree

from .timeline import Entry

# One series per meter: the manager's calls (the ledger) and the rounds' hosts (the rollout).
METERS = {"round": "rounds (host)"}
MANAGER = "manager"


def series(entries: list[Entry]) -> dict[str, list[tuple[float, float]]]:
    """Cumulative USD per meter against minutes since the first entry."""
    if not entries:
        return {}
    start = _epoch(entries[0].at)
    totals: dict[str, float] = {}
    points: dict[str, list[tuple[float, float]]] = {}
    for entry in entries:
        if not entry.cost_usd:
            continue
        meter = METERS.get(entry.kind, MANAGER)
        totals[meter] = totals.get(meter, 0.0) + entry.cost_usd
        line = points.setdefault(meter, [(0.0, 0.0)])
        line.append((round((_epoch(entry.at) - start) / 60, 2), round(totals[meter], 6)))
    return points


def svg(points: dict[str, list[tuple[float, float]]]) -> str:
    """The chart as one `<svg>` element, or "" when nothing was spent."""
    if not points:
        return ""
    import pygal  # type: ignore[import-untyped]  # lazily: a hook never draws

    chart = pygal.XY(
        js=[],
        disable_xml_declaration=True,
        width=720,
        height=320,
        x_title="minutes since start",
        y_title="USD spent",
        show_dots=True,
        legend_at_bottom=True,
        value_formatter=lambda value: f"${value:.4f}",
    )
    for name, line in points.items():
        chart.add(name, line)
    tree = chart.render_tree()
    for parent in tree.iter():
        for child in list(parent):
            if str(child.tag).rsplit("}", 1)[-1].lower() == "script":
                parent.remove(child)
    return ElementTree.tostring(tree, encoding="unicode")


def _epoch(at: str) -> float:
    try:
        return float(calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return 0.0
