"""The run's report: a table on stdout, `summary.json`, and one HTML page drawn with the
product's report charting (`autopilot_codex.report.chart`: its pygal style, scripts removed),
rendered by Jinja2 with autoescaping on (task names and errors are the run's text)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autopilot_codex.report import chart
from autopilot_codex.spend import usd

from . import records
from .summary import BASELINE, ArmSummary, summarise, to_json

TEMPLATE = "report.html.j2"
CHART_LABEL = "Resolve rate per arm, with its 95 % Wilson interval"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _money(value: float | None) -> str:
    return "—" if value is None else usd(value)


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}s"


def rows(summaries: Sequence[ArmSummary]) -> list[dict[str, str]]:
    """The table's cells, the same for the terminal and the page."""
    out = []
    for s in summaries:
        v = s.versus_baseline
        out.append(
            {
                "arm": s.arm,
                "resolved": f"{s.resolved}/{s.trials}",
                "rate": f"{_pct(s.rate)} [{_pct(s.low)}, {_pct(s.high)}]",
                "versus": "—"
                if v is None
                else f"{100 * v.difference:+.0f} pts [{100 * v.low:+.0f}, {100 * v.high:+.0f}]",
                "p": "—" if v is None else f"{v.p_value:.3g} ({v.only_arm}:{v.only_base})",
                "false_done": f"{s.false_done}/{s.said_done} ({_pct(s.false_done_rate)})",
                "usd": _money(s.usd),
                "per_resolved": _money(s.usd_per_resolved),
                "manager_share": _pct(s.manager_share),
                "time": _seconds(s.median_wall_s),
                "errors": str(s.errors),
            }
        )
    return out


HEADINGS = {
    "arm": "arm",
    "resolved": "resolved",
    "rate": "rate [95% CI]",
    "versus": f"vs {BASELINE} [95% CI]",
    "p": "McNemar p",
    "false_done": "false done",
    "usd": "$ total",
    "per_resolved": "$ / resolved",
    "manager_share": "manager share",
    "time": "median time",
    "errors": "errors",
}


def table(cells: list[dict[str, str]]) -> str:
    widths = {k: max(len(h), *(len(r[k]) for r in cells)) for k, h in HEADINGS.items()}
    line = "  ".join(h.ljust(widths[k]) for k, h in HEADINGS.items())
    body = ["  ".join(r[k].ljust(widths[k]) for k in HEADINGS) for r in cells]
    return "\n".join([line, *body])


def svg(summaries: Sequence[ArmSummary]) -> str:
    """Resolve rate per arm as bars with their intervals, or "" when there is no trial."""
    if not summaries:
        return ""
    import pygal  # type: ignore[import-untyped]

    bars = pygal.Bar(
        js=[],
        disable_xml_declaration=True,
        width=480,
        height=300,
        style=chart.page_style(),
        title=CHART_LABEL,
        y_title="resolved, %",
        range=(0, 100),
        show_legend=False,
        # Whole arm names: pygal would cut "autopilot" to "auto…" at this width.
        truncate_label=-1,
        x_label_rotation=20 if len(summaries) > 4 else 0,
        max_scale=5,
        value_formatter=lambda value: f"{value:.0f}%",
    )
    bars.x_labels = [s.arm for s in summaries]
    bars.add(
        "resolved",
        [
            {"value": 100 * s.rate, "ci": {"low": 100 * s.low, "high": 100 * s.high}}
            for s in summaries
        ],
    )
    return chart.scrubbed(bars, CHART_LABEL)


def html(summaries: Sequence[ArmSummary], meta: dict[str, Any], trials: list[records.Trial]) -> str:
    from markupsafe import Markup

    from autopilot_codex.report.render import templates

    env = templates(Path(__file__).parent)
    return env.get_template(TEMPLATE).render(
        meta=meta,
        headings=HEADINGS,
        rows=rows(summaries),
        # The chart alone is markup: pygal's, from numbers, with every script removed.
        chart=Markup(svg(summaries)),  # noqa: S704
        trials=[{**t.to_json(), "usd_text": usd(t.usd)} for t in trials],
    )


def write_report(run_dir: Path) -> str:
    """Write summary.json and report.html into `run_dir`; the table as text."""
    trials = records.load(run_dir)
    if not trials:
        raise FileNotFoundError(f"no trial in {run_dir / records.TRIALS}")
    meta_path = run_dir / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    summaries = summarise(trials)
    (run_dir / "summary.json").write_text(
        json.dumps(to_json(summaries, meta), indent=2, sort_keys=True) + "\n"
    )
    (run_dir / "report.html").write_text(html(summaries, meta, trials), encoding="utf-8")
    return table(rows(summaries)) + f"\n\nwritten: {run_dir / 'summary.json'}, {run_dir / 'report.html'}"
