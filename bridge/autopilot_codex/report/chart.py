"""Both meters' spend over time, stacked, as inline SVG drawn offline by pygal, with no script,
and the same numbers as rows for a small table beside it.

pygal always embeds a small script of its own (its tooltips' config); the page must run none,
so the chart is taken as an element tree and every script element is dropped before it is
serialised. The series names and numbers are the report's own, never the loop's text.

The manager's calls are in the ledger, each at its time; a rounds run's host costs in its
rollout, each at its round. The other styles' implementer spend is one running total in the
state (read from the host's record at each hook), so it is drawn as reached by the last entry.
Each meter ends at the loop's figure (`spend.of_files`), so the chart and the summary agree.
"""

from __future__ import annotations

import calendar
import math
import sys
import time
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from ..spend import Spend
from .timeline import Entry

MANAGER = "manager"
# Past this many dollars a figure is no loop's spend but a hand-edited state (finite, so every
# reader takes it) that pygal cannot scale: no chart then; the table beside it has the numbers.
DRAWABLE_USD = 1e12
# Names each meter as the page's summary does ("rounds" for a rounds run's hosts).
LABEL = "Spend over time, stacked: {} and {}"


@dataclass(frozen=True)
class Row:
    """One moment: the time since the start (in `unit`) and each meter's spend so far."""

    at: float
    manager: float
    implementer: float

    @property
    def total(self) -> float:
        return self.manager + self.implementer


def unit_of(span_s: float) -> tuple[str, float]:
    """The time unit that keeps the axis' numbers readable: seconds, minutes or hours."""
    if span_s < 120:
        return "seconds", 1.0
    if span_s < 2 * 3600:
        return "minutes", 60.0
    return "hours", 3600.0


def rows(entries: list[Entry], spend: Spend) -> tuple[list[Row], str]:
    """Each meter's cumulative spend at each entry that cost something, and the time unit;
    ([], "") when nothing was spent."""
    if not entries or spend.total <= 0:
        return [], ""
    start = _epoch(entries[0].at)
    span = max(0.0, _epoch(entries[-1].at) - start)
    unit, size = unit_of(span)
    manager = implementer = 0.0
    found = [Row(0.0, 0.0, 0.0)]
    for entry in entries:
        if not entry.cost_usd:
            continue
        if entry.kind == "round":
            implementer += entry.cost_usd
        else:
            manager += entry.cost_usd
        found.append(Row(round((_epoch(entry.at) - start) / size, 2), manager, implementer))
    # The loop's own figure at the end: the state's running totals hold what the ledger lacks.
    found.append(Row(round(span / size, 2), spend.manager, spend.implementer))
    return found, unit


def svg(found: list[Row], unit: str, implementer: str = "implementer") -> str:
    """The chart as one `<svg>` element, or "" when nothing was spent."""
    if not found or max(r.total for r in found) > DRAWABLE_USD:
        return ""
    import pygal  # type: ignore[import-untyped]  # lazily: a hook never draws

    style = page_style()
    label = LABEL.format(MANAGER, implementer)
    # Cents, or as many places as a spend under a cent needs for its axis' labels to differ.
    places = max(2, 1 - math.floor(math.log10(max(max(r.total for r in found), 1e-6))))
    # Narrow, so a phone's 390 px draws its text at a readable size.
    chart = pygal.StackedLine(
        js=[],
        disable_xml_declaration=True,
        width=480,
        height=300,
        style=style,
        fill=True,
        title=label,
        x_title=f"{unit} since start",
        y_title="USD spent",
        legend_at_bottom=True,
        show_minor_x_labels=False,
        x_labels_major_count=4,
        # Few dollar labels: the plot is some 150 units tall, and pygal's default of up to 16
        # labels drew them over one another.
        max_scale=5,
        value_formatter=lambda value: f"${value:.{places}f}",
    )
    chart.x_labels = [f"{r.at:g}" for r in found]
    chart.add(MANAGER, [r.manager for r in found])
    chart.add(implementer, [r.implementer for r in found])
    return scrubbed(chart, label)


def page_style() -> Any:
    """The charts' pygal style: transparent, in the page's own text colour and font, so a
    chart follows a dark scheme too (also the benchmark report's, bench/ab)."""
    from pygal.style import Style  # type: ignore[import-untyped]

    # pygal hooks the import system for map plugins the report never uses, with a finder that
    # lacks `find_spec`: every later import of a missing module (pickle's probe, which jinja2
    # sets off) then warns. Taken out again, so drawing first and rendering after is safe.
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "PluginImportFixer"]
    return Style(
        background="transparent",
        plot_background="transparent",
        font_family="system-ui, sans-serif",  # the page's own, not pygal's monospace
        foreground="currentColor",
        foreground_strong="currentColor",
        foreground_subtle="rgba(127,127,127,0.4)",
        colors=("#3b82f6", "#f59e0b"),
        label_font_size=16,
        major_label_font_size=16,
        legend_font_size=16,
        title_font_size=16,
        value_font_size=16,
        tooltip_font_size=16,
    )


def scrubbed(chart: Any, label: str) -> str:
    """A drawn pygal chart as one `<svg>` element with every script removed (the page runs
    none), named `label` for a screen reader."""
    tree = chart.render_tree()
    for parent in tree.iter():
        for child in list(parent):
            if str(child.tag).rsplit("}", 1)[-1].lower() == "script":
                parent.remove(child)
    tree.set("role", "img")
    tree.set("aria-label", label)
    return ElementTree.tostring(tree, encoding="unicode")


def _epoch(at: str) -> float:
    try:
        return float(calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return 0.0
