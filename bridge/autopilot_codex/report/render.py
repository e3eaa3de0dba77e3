"""The report page: gathered from the loop's files, rendered by Jinja2 with autoescaping on.

Everything the loop wrote (the goal, findings, check output, commit subjects, messages) is
untrusted text: it reaches the page only through the template's autoescaping. The one piece
marked safe is the chart, which pygal drew from numbers and the report's own series names,
with its scripts removed (`chart.svg`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..loopfiles import LoopFiles, items, number, strings, text
from ..spend import of_files, usd
from . import chart, commits, lanes, summary, timeline

if TYPE_CHECKING:
    import jinja2

TEMPLATE = "report.html.j2"


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    done: bool
    current: bool


def outcome(files: LoopFiles) -> str:
    """Why the loop is where it is, in its own words."""
    return (
        text(files.state, "stop_reason")
        or text(files.result, "why")
        or text(files.run_end(), "status")
        or ""
    )


def context(files: LoopFiles, worktree: Path) -> dict[str, Any]:
    entries = timeline.build(files)
    done = strings(files.state, "completed_tasks")
    current = text(files.state, "current_task")
    tasks = [
        Task(text(t, "id"), text(t, "title"), text(t, "id") in done, text(t, "id") == current)
        for t in items(files.plan, "tasks")
    ]
    spend = of_files(files)
    run = lanes.section(worktree)
    chart_rows, unit = chart.rows(entries, spend)
    return {
        "goal": files.goal,
        "style": files.style,
        "status": files.status,
        "outcome": outcome(files),
        "worktree": str(worktree),
        "spend": spend,
        "summary_strip": summary.build(files, spend),
        "chart_rows": chart_rows,
        "chart_unit": unit,
        "iteration": int(number(files.state, "iteration")),
        "wall": text(files.state, "wall"),
        "summary": text(files.plan, "summary"),
        "tasks": tasks,
        "lanes": run if isinstance(run, lanes.Lanes) else None,
        "lanes_note": run if isinstance(run, str) else "",
        "entries": entries,
        "kinds": sorted({e.kind for e in entries}),
        "groups": commits.grouped(commits.commits(files, entries, worktree)),
        "chart": chart.svg(chart_rows, unit, spend.implementer_name),
        "checks": [text(c, "command") for c in items(files.state, "checks")],
        "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "version": __version__,
    }


def templates(folder: Path) -> jinja2.Environment:
    """The pages' template engine over `folder`: every value escaped, a missing one an error."""
    import jinja2  # lazily: a hook never renders

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(files: LoopFiles, worktree: Path) -> str:
    from markupsafe import Markup

    env = templates(Path(__file__).parent)
    env.filters["usd"] = usd
    data = context(files, worktree)
    # The chart alone is markup: pygal's, from numbers, with every script removed.
    data["chart"] = Markup(data["chart"])  # noqa: S704
    return env.get_template(TEMPLATE).render(**data)
