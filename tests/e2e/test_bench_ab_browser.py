"""The A/B report page looked at in a real headless Chromium at 1280 and 390 px, as the loop
report is (tests/e2e/test_report_browser.py): the table shows the summary's figures, the chart
is there and named, no script runs, and the page never scrolls sideways (a wide table scrolls
in its own box). A screenshot of each width is left in the test's folder."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.ab import records, report
from bench.ab.records import Trial
from bench.ab.summary import summarise

from .browser import Browser, find_chromium

pytestmark = pytest.mark.e2e

SEEN = r"""(() => {
  const text = (el) => el ? el.textContent.trim() : null;
  const rows = [...document.querySelectorAll('#arms tbody tr')].map(r => [...r.cells].map(text));
  const escaped = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg') || el.closest('.scroll') || el.clientWidth === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1) escaped.push(el.outerHTML.slice(0, 120));
  }
  const svg = document.querySelector('.chart svg');
  return {
    rows,
    escaped,
    scripts: document.querySelectorAll('script').length,
    arms_box: (() => { const b = document.querySelector('#arms').parentElement;
      return [b.scrollWidth, b.clientWidth]; })(),
    page: [document.documentElement.scrollWidth, window.innerWidth],
    chart: svg ? [...svg.querySelectorAll('text')].map(t => t.textContent) : null,
    chart_width: svg ? svg.getBoundingClientRect().width : 0,
  };
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = find_chromium()
    if binary is None:
        message = "Chromium is not installed (apt-get install chromium): the page is not looked at"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    running = Browser(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield running
    running.close()


def trials() -> list[Trial]:
    out = []
    outcomes = {
        "solo": [True, False, False, True],
        "autopilot": [True, True, False, True],
        "ralph": [True, False, True, True],
        "rounds": [True, True, True, True],
        "lanes": [False, True, True, False],
    }
    for arm, resolved in outcomes.items():
        for i, ok in enumerate(resolved):
            out.append(
                Trial(
                    task=f"task-{i}",
                    arm=arm,
                    rep=0,
                    host="claude",
                    model="claude-sonnet-4-5",
                    resolved=ok,
                    said_done=True,
                    host_usd=0.3,
                    manager_usd=0.0 if arm in ("solo", "ralph") else 0.1,
                    tokens=12000,
                    wall_s=120.0,
                    status="done",
                )
            )
    return out


def test_the_ab_report_in_a_browser(browser: Browser, tmp_path: Path) -> None:
    for t in trials():
        records.append(tmp_path, t)
    (tmp_path / "meta.json").write_text(json.dumps({"date": "2026-12-07", "n": 1, "tasks": ["a"]}))
    report.write_report(tmp_path)
    expected = [list(r.values()) for r in report.rows(summarise(records.load(tmp_path)))]
    page = tmp_path / "report.html"
    for width in (1280, 390):
        browser.open(page, width)
        browser.screenshot(tmp_path / f"ab-report-{width}.png")
        seen: dict[str, Any] = browser.evaluate(SEEN)
        where = f"at {width} px"
        assert seen["rows"] == expected, (where, seen["rows"])
        assert seen["scripts"] == 0, where
        assert seen["escaped"] == [], (where, seen["escaped"])
        scrolled, wide = seen["page"]
        assert scrolled <= wide, (where, "the page scrolls sideways", scrolled, wide)
        assert browser.accessible_name(".chart svg") == report.CHART_LABEL, where
        assert {"solo", "autopilot", "ralph", "rounds", "lanes"} <= set(seen["chart"]), where
        assert seen["chart_width"] >= 300, (where, seen["chart_width"])
        if width >= 1280:
            # On a wide screen the per-arm table is whole, not scrolled in its box.
            inner, box = seen["arms_box"]
            assert inner <= box, (where, "the per-arm table scrolls", inner, box)
