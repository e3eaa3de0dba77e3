"""The report of one loop per style, looked at in a real headless Chromium at 1280 and 390 px
(issue 36): the figures the page shows equal `status --json`'s, no text overflows its box or
breaks inside a word, the page never scrolls sideways, and the chart's accessible name and
legend name both meters. A screenshot of each width is left in the test's folder."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.spend import usd
from tests.conftest import cli, payload, plan_body, run_hook_inproc, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.integration.test_budget_meters import spend as spend_in
from tests.integration.test_rounds_driver import EXIT, READY, Script, drive

from .browser import Browser, find_chromium

Capsys = pytest.CaptureFixture[str]
WIDTHS = (1280, 390)

# What the page shows, read in the page: the figures in each place, and every layout fault.
# A word is the text between spaces, hyphens and slashes, where a line may break; one drawn
# on two lines was cut.
FACTS = r"""(() => {
  const text = (el) => el ? el.textContent.trim() : null;
  const strip = {};
  for (const li of document.querySelectorAll('#summary li')) {
    const b = li.querySelector('b');
    if (b) strip[li.firstChild.textContent.trim()] = text(b);
  }
  const rows = [...document.querySelectorAll('table.chart-data tbody tr')];
  const last = rows.length ? [...rows[rows.length - 1].cells].map(text) : null;
  const overflowing = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg') || el.clientWidth === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1) overflowing.push(el.outerHTML.slice(0, 120));
  }
  const cut = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest('svg')) continue;
    for (const m of node.data.matchAll(/[^\s\/-]+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => r.top));
      if (lines.size > 1) cut.push(m[0]);
    }
  }
  const svg = document.querySelector('.chart svg');
  // The chart's words drawn over one another (an axis with more labels than room).
  const drawn = svg ? [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
    .map(t => [t.textContent, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0) : [];
  const overlapping = [];
  drawn.forEach(([a, r], i) => drawn.slice(i + 1).forEach(([b, q]) => {
    const x = Math.min(r.right, q.right) - Math.max(r.left, q.left);
    const y = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
    if (x > 1 && y > 1) overlapping.push([a, b]);
  }));
  return {
    strip,
    facts: {
      manager: text(document.getElementById('spend-manager')),
      implementer: text(document.getElementById('spend-implementer')),
      total: text(document.getElementById('spend-total')),
    },
    last,
    overflowing,
    cut,
    page: [document.documentElement.scrollWidth, window.innerWidth],
    chart: svg ? [...svg.querySelectorAll('text')].map(t => t.textContent) : null,
    overlapping,
    chart_width: svg ? svg.getBoundingClientRect().width : 0,
  };
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One Chromium for this module's pages (gone before the rest of the suite runs); each page
    is opened at each width in turn."""
    binary = find_chromium()
    if binary is None:
        message = (
            "Chromium is not installed (apt-get install chromium): the report is not looked at"
        )
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    running = Browser(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield running
    running.close()


def look(browser: Browser, repo: Path, capsys: Capsys, tmp_path: Path, implementer: str) -> None:
    """The loop's report at each width agrees with `status --json` and reads whole."""
    spend = json.loads(cli(capsys, "-C", str(repo), "status", "--json")[1])["spend"]
    out = tmp_path / "report.html"
    assert cli(capsys, "-C", str(repo), "report", "--out", str(out))[0] == 0
    manager = usd(spend["manager_usd"])
    implementer_usd = usd(spend["implementer_usd"], estimated=bool(spend["estimated"]))
    for width in WIDTHS:
        browser.open(out, width)
        browser.screenshot(tmp_path / f"report-{width}.png")
        seen: dict[str, Any] = browser.evaluate(FACTS)
        where = f"at {width} px"
        assert seen["strip"]["manager"] == manager, (where, seen["strip"])
        assert seen["strip"][implementer] == implementer_usd, (where, seen["strip"])
        assert seen["strip"]["total"] == spend["total"], (where, seen["strip"])
        assert seen["facts"]["manager"] == manager, (where, seen["facts"])
        assert seen["facts"]["implementer"] == implementer_usd, (where, seen["facts"])
        assert seen["facts"]["total"].startswith(spend["total"]), (where, seen["facts"])
        # The chart's last row is the loop's figure, meter by meter.
        assert seen["last"][1:] == [manager, usd(spend["implementer_usd"]), usd(spend["total_usd"])]
        assert seen["overflowing"] == [], (where, seen["overflowing"])
        assert seen["cut"] == [], (where, seen["cut"])
        scrolled, wide = seen["page"]
        assert scrolled <= wide, (where, "the page scrolls sideways", scrolled, wide)
        # Named both to a screen reader and in the legend, never shortened to fit.
        name = browser.accessible_name(".chart svg")
        assert "manager" in name and implementer in name, (where, name)
        assert {"manager", implementer} <= set(seen["chart"]), (where, seen["chart"])
        assert not [t for t in seen["chart"] if "…" in t], (where, seen["chart"])
        assert seen["overlapping"] == [], (where, seen["overlapping"])
        # Each dollar label on the axis its own figure: a spend under a cent once read "$0.00"
        # five times.
        dollars = [t for t in seen["chart"] if t.startswith("$")]
        assert len(dollars) == len(set(dollars)) >= 2, (where, dollars)
        assert seen["chart_width"] >= 300, (where, seen["chart_width"])


def test_an_autopilot_report_in_a_browser(
    browser: Browser,
    repo: Path,
    manager: FakeOpenAI,
    capsys: Capsys,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(
        capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "--budget", "1", "goal"
    )
    assert code == 0, out
    transcript = tmp_path / "session.jsonl"
    spend_in(transcript, "m1", 40_000)  # $0.60 of Sonnet 4's output
    run_hook_inproc(
        "PostToolUse",
        payload(
            "PostToolUse",
            repo,
            tool_name="Bash",
            tool_input={"command": "ls"},
            transcript_path=str(transcript),
        ),
        capsys,
        monkeypatch,
    )
    look(browser, repo, capsys, tmp_path, "implementer")


def test_a_ralph_report_in_a_browser(
    browser: Browser, repo: Path, capsys: Capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = cli(
        capsys,
        "-C",
        str(repo),
        "ralph",
        "--session-id",
        "sess-1",
        "--max-iterations",
        "5",
        "--budget",
        "2",
        "Make",
        "it",
        "pass.",
    )
    assert code == 0, out
    transcript = tmp_path / "session.jsonl"
    spend_in(transcript, "m1", 300)  # under a cent: "<$0.01" everywhere
    run_hook_inproc(
        "Stop",
        payload("Stop", repo, last_assistant_message="Working.", transcript_path=str(transcript)),
        capsys,
        monkeypatch,
    )
    look(browser, repo, capsys, tmp_path, "implementer")


def test_a_rounds_report_in_a_browser(
    browser: Browser,
    repo: Path,
    script: Script,
    manager: FakeOpenAI,
    capsys: Capsys,
    tmp_path: Path,
) -> None:
    script([READY, EXIT])
    manager.enqueue(
        Reply(body=verdict_body("done"), input_tokens=100_000, output_tokens=200), schema="Verdict"
    )
    code, record = drive(repo, "--manager", "openai", "--budget", "3")
    assert code == 0, record
    look(browser, repo, capsys, tmp_path, "rounds")


def test_the_page_checks_see_each_fault(browser: Browser, tmp_path: Path) -> None:
    """Each layout check fires on a page made to fail it: a check that cannot fail proves
    nothing about the report."""
    page = tmp_path / "faulty.html"
    page.write_text(
        "<!DOCTYPE html><html><body>"
        '<p style="width:80px;white-space:nowrap">overflowing words in a narrow box</p>'
        '<p style="width:60px;overflow-wrap:anywhere">Implementer</p>'
        '<div style="width:2000px">wide</div>'
        '<div class="chart"><svg width="200" height="50" role="img" aria-label="one meter">'
        '<text x="10" y="20">$0.00</text><text x="12" y="22">$0.00</text>'
        '<text x="10" y="45">implem…</text></svg></div>'
        "</body></html>",
        encoding="utf-8",
    )
    browser.open(page, 390)
    seen: dict[str, Any] = browser.evaluate(FACTS)
    assert any("overflowing words" in html for html in seen["overflowing"]), seen["overflowing"]
    assert seen["cut"] == ["Implementer"], seen["cut"]
    scrolled, wide = seen["page"]
    assert scrolled > wide
    assert seen["overlapping"] == [["$0.00", "$0.00"]], seen["overlapping"]
    assert "implem…" in seen["chart"]
    assert browser.accessible_name(".chart svg") == "one meter"
