"""`autopilot-codex report` for each loop style, made by the existing fakes, parsed back with
html.parser: the page's sections, and the loop's untrusted text as text, never as markup."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import (
    Hook,
    edit_payload,
    git,
    payload,
    plan_body,
    review_body,
    run_hook_inproc,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.integration.test_ralph import PROMISE, start, stop
from tests.integration.test_rounds_driver import EXIT, READY, Script, drive

SCRIPT = "<script>alert(1)</script>"
ONLOAD = '"onload="alert(2)'
TEXTAREA = "</textarea><img src=x onerror=alert(3)>"
PAYLOAD = f"{SCRIPT} {ONLOAD} {TEXTAREA}"
# What a page must never hold as markup, whatever the loop wrote.
LIVE_TAGS = {"script", "img", "textarea", "iframe", "object", "embed", "link"}


class Page(HTMLParser):
    """Every tag with its attributes, the ids, and the text, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def ids(self) -> set[str]:
        return {a["id"] or "" for _, a in self.tags if a.get("id")}

    def by_class(self, name: str) -> list[dict[str, str | None]]:
        return [a for _, a in self.tags if name in (a.get("class") or "").split()]


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def assert_inert(page: Page) -> None:
    names = {tag for tag, _ in page.tags}
    assert not names & LIVE_TAGS, names & LIVE_TAGS
    for tag, attrs in page.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        for name in ("href", "src", "xlink:href"):
            assert not (attrs.get(name) or "").lower().startswith(("http", "//", "javascript")), (
                attrs
            )


def build(repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[str, str]:
    out = tmp_path / "out" / "report.html"
    capsys.readouterr()
    assert main(["-C", str(repo), "report", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert str(out) in said
    return out.read_text(encoding="utf-8"), said


def test_an_autopilot_loop(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    goal = ["write", "two", "files", SCRIPT, ONLOAD, TEXTAREA]
    assert main(["-C", str(repo), "plan", "--check", f"echo '{SCRIPT}'", "--", *goal]) == 0
    run_hook_inproc(
        "UserPromptSubmit", payload("UserPromptSubmit", repo, prompt="go"), capsys, monkeypatch
    )
    (repo / "file1.txt").write_text("one\n")
    finding = {
        "severity": "high",
        # On a file the task changed: a finding elsewhere is advisory and does not block.
        "file": "file1.txt",
        "line_start": 3,
        "line_end": 4,
        "title": f"bad {SCRIPT} {TEXTAREA}",
        "recommendation": ONLOAD,
    }
    manager.enqueue(
        review_body("fix", summary=f"needs a fix {TEXTAREA}", findings=[finding]), schema="Review"
    )
    run_hook_inproc("PostToolUse", edit_payload(repo), capsys, monkeypatch)
    r = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    assert "Review: fix" in r.json["reason"], r
    (repo / "file1.txt").write_text("one, fixed\n")
    manager.enqueue(review_body("approve"), schema="Review")
    run_hook_inproc("PostToolUse", edit_payload(repo), capsys, monkeypatch)
    git(repo, "add", "file1.txt")
    # Commit times on either side of the acceptance, which is what ties a commit to its task.
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2000-01-01T00:00:00+00:00")
    git(repo, "commit", "-q", "-m", f"feat: file1 {SCRIPT}")
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    r = run_hook_inproc("Stop", payload("Stop", repo, stop_hook_active=True), capsys, monkeypatch)
    assert "Task T2" in r.json["reason"], r
    (repo / "file2.txt").write_text("two\n")
    manager.enqueue(review_body("approve"), schema="Review")
    run_hook_inproc("PostToolUse", edit_payload(repo, "file2.txt"), capsys, monkeypatch)
    git(repo, "add", "file2.txt")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2090-01-01T00:00:00+00:00")
    git(repo, "commit", "-q", "-m", "feat: file2")
    manager.enqueue(verdict_body("done", reason=PAYLOAD), schema="Verdict")
    r = run_hook_inproc("Stop", payload("Stop", repo, stop_hook_active=True), capsys, monkeypatch)
    # The final message names the report and the total spend.
    assert "autopilot-codex report" in r.stderr + r.stdout
    assert "Spent: manager $" in r.stderr + r.stdout

    html, said = build(repo, capsys, tmp_path)
    page = parse(html)
    assert_inert(page)
    text = "".join(page.text)
    for payload_text in (SCRIPT, ONLOAD, TEXTAREA):
        assert payload_text in text
    assert {"goal", "outcome", "tasks", "spend", "timeline", "commits"} <= page.ids
    kinds = {
        c.split("kind-")[1].split()[0]
        for c in (a.get("class") or "" for a in page.by_class("entry"))
    }
    assert {"plan", "review", "verdict", "check"} <= kinds
    assert f"bad {SCRIPT}" in text and "needs a fix" in text
    assert "task T1" in text and "task T2" in text
    assert [t for t, _ in page.tags].count("svg") == 1
    assert "done" in said


def test_a_ralph_loop(
    repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook, tmp_path: Path
) -> None:
    start(repo, capsys)
    stop(hook, repo, message="Still working.")
    r = stop(hook, repo, message=f"All done.\n{PROMISE}")
    assert "autopilot-codex report" in r.stdout + r.stderr
    html, _ = build(repo, capsys, tmp_path)
    page = parse(html)
    assert_inert(page)
    text = "".join(page.text)
    assert "Make the tests pass." in text
    # Plain names, not the ledger's event names and hook decisions ("ralph.continue: block").
    assert "ralph: continue" in text and "ralph: done" in text and ": block" not in text


def test_a_rounds_run(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script([{**READY, "commit": f"add hello {SCRIPT}"}, EXIT])
    code, record = drive(repo, goal=f"greet {TEXTAREA}")
    assert code == 0, record
    html, _ = build(repo, capsys, tmp_path)
    page = parse(html)
    assert_inert(page)
    text = "".join(page.text)
    assert (
        TEXTAREA in text
        and "round 1 (implement, attempt 1)" in text
        and "round 2 (verify, attempt 1)" in text
    )
    assert "round 1" in {h.strip() for h in page.text}  # the commit is grouped by its round


def test_a_rounds_runs_manager_spend_is_in_its_timeline_and_chart(
    repo: Path,
    script: Script,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from autopilot_codex.loopfiles import load
    from autopilot_codex.report import chart, timeline
    from autopilot_codex.spend import of_files

    script([READY, EXIT])
    # 100,000 input and 200 output tokens of gpt-6.2-sol: $0.202.
    manager.enqueue(
        Reply(body=verdict_body("done"), input_tokens=100_000, output_tokens=200), schema="Verdict"
    )
    code, record = drive(repo, "--manager", "openai")
    assert code == 0, record
    entries = timeline.build(load(project_dir(repo)))
    said = [e for e in entries if e.title.startswith("manager on round")]
    assert [(e.title, e.kind, e.ok) for e in said] == [
        ("manager on round 2: done", "verdict", True)
    ]
    assert said[0].cost_usd == pytest.approx(0.202)
    rounds = [e for e in entries if e.kind == "round"]
    assert entries.index(said[0]) > entries.index(rounds[-1])  # after the round it judged
    found, unit = chart.rows(entries, of_files(load(project_dir(repo))))
    assert found[-1].manager == pytest.approx(0.202)
    assert found[-1].implementer == pytest.approx(0.02)
    assert unit == "seconds"
    html, _ = build(repo, capsys, tmp_path)
    text = "".join(parse(html).text)
    assert "manager on round 2: done" in text and "$0.20" in text


def test_no_loop_is_a_plain_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(repo), "report"]) == 1
    assert "no loop" in capsys.readouterr().out


def test_open_without_a_browser_says_so(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = project_dir(repo)
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text(
        json.dumps({"ts": "2026-01-01T00:00:00+00:00", "event": "plan"}) + "\n"
    )
    monkeypatch.setenv("BROWSER", "")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    import webbrowser

    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})
    assert main(["-C", str(repo), "report", "--open"]) == 0
    out = capsys.readouterr().out
    assert "No browser is available" in out
    assert (folder / "report.html").exists()


def test_missing_and_extra_fields_are_tolerated(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = project_dir(repo)
    folder.mkdir(parents=True)
    (folder / "state.json").write_text(
        json.dumps(
            {"goal": 5, "status": None, "new_field": {"x": 1}, "reviewed": [1, {"decision": "fix"}]}
        )
    )
    lines: list[Any] = [
        {"event": "review.fix", "ts": 3},
        "not an object",
        {"ts": "2026-01-01T00:00:00+00:00", "event": "x", "cost_usd": "lots"},
    ]
    (folder / "events.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n{torn")
    html, _ = build(repo, capsys, tmp_path)
    assert_inert(parse(html))


def test_a_tampered_base_is_never_an_option_to_git(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """state.json is the implementer's to write in an unguarded loop: its base_sha must not
    become `git log --output=FILE`."""
    folder = project_dir(repo)
    folder.mkdir(parents=True)
    planted = tmp_path / "planted"
    state = {
        "goal": "g",
        "status": "done",
        "worktree": str(repo),
        "base_sha": f"--output={planted}",
    }
    (folder / "state.json").write_text(json.dumps(state))
    html, _ = build(repo, capsys, tmp_path)
    assert list(tmp_path.glob("planted*")) == []
    assert "No commits" in html


def test_a_fifo_or_a_link_in_the_loop_folder_is_not_read(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import os

    folder = project_dir(repo)
    folder.mkdir(parents=True)
    os.mkfifo(folder / "events.jsonl")
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"goal": "SECRET-GOAL", "status": "done"}))
    (folder / "state.json").symlink_to(secret)
    (folder / "plan.json").write_text(json.dumps({"summary": "s", "tasks": []}))
    html, _ = build(repo, capsys, tmp_path)
    assert "SECRET-GOAL" not in html


def test_the_implementers_questions_and_who_answered_them(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0

    def ask(question: str, answer: str) -> None:
        manager.enqueue(
            {"answer": answer, "confidence": "high", "plan_change": None}, schema="Consultation"
        )
        data = payload(
            "PreToolUse",
            repo,
            tool_name="AskUserQuestion",
            tool_input={"questions": [{"question": question, "options": [{"label": ONLOAD}]}]},
        )
        run_hook_inproc("PreToolUse", data, capsys, monkeypatch)

    ask(f"Which cache {SCRIPT}?", f"Take SQLite {TEXTAREA}")
    ask("Which colour?", f"ASK_THE_USER: taste {SCRIPT}")

    html, _ = build(repo, capsys, tmp_path)
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    ledger = [json.loads(line) for line in lines]
    page = parse(html)
    assert_inert(page)
    text = "".join(page.text)
    assert "question answered by the manager (task T1)" in text
    assert f"Which cache {SCRIPT}?" in text and f"→ Take SQLite {TEXTAREA}" in text
    assert ONLOAD in text
    assert "question left to the user (task T1)" in text and f"why: taste {SCRIPT}" in text
    assert len(page.by_class("kind-question")) == 1
    # Each consultation is charged once, on its `ask` entry: the question's entry restates
    # the cost the ledger holds, and the page's manager figure is the state's (it once
    # showed both, the manager's spend counted twice).
    from autopilot_codex.loopfiles import load
    from autopilot_codex.report import timeline

    costs = [e["cost_usd"] for e in ledger if e["event"].startswith("question.")]
    assert len(costs) == 2 and all(c > 0 for c in costs)
    entries = timeline.build(load(project_dir(repo)))
    spent = json.loads((project_dir(repo) / "state.json").read_text())
    assert sum(e.cost_usd for e in entries) == pytest.approx(spent["budget_used_usd"])
    assert not [e for e in entries if e.kind == "question" and e.cost_usd]


def _one_event_loop(repo: Path) -> Path:
    folder = project_dir(repo)
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text(
        json.dumps({"ts": "2026-01-01T00:00:00+00:00", "event": "plan"}) + "\n"
    )
    return folder


@pytest.mark.parametrize(
    ("browser", "said"),
    [("true", "Opened in your browser."), ("false", "The browser did not open; open the file")],
)
def test_open_says_whether_the_browser_took_the_page(
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    browser: str,
    said: str,
) -> None:
    _one_event_loop(repo)
    import webbrowser

    # A browser command that exits 0 or 1, as a real one does when it took the page or not.
    monkeypatch.setenv("BROWSER", browser)
    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})
    assert main(["-C", str(repo), "report", "--open"]) == 0
    assert said in capsys.readouterr().out


def test_a_relative_out_is_under_the_loop_s_folder_and_a_failed_write_leaves_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_event_loop(repo)
    assert main(["-C", str(repo), "report", "--out", "page.html"]) == 0
    assert f"Report: {repo / 'page.html'}" in capsys.readouterr().out
    (repo / "taken").mkdir()  # a folder where the page would go: the rename fails
    assert main(["-C", str(repo), "report", "--out", "taken"]) == 1
    assert f"cannot write the report to {repo / 'taken'}: Is a directory" in capsys.readouterr().out
    assert [p.name for p in repo.iterdir() if p.name.startswith(".taken.")] == []


def test_a_resumed_rounds_run_keeps_its_earlier_rounds_commits(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`run --resume` holds the loop again from HEAD: the commits before it once vanished."""
    first = {"write": {"one.txt": "1\n"}, "commit": "add one", "say": "Part one."}
    script([first, READY, EXIT])
    code, record = drive(repo, "--rounds", "1")
    assert (code, record["status"]) == (2, "round_limit"), record
    code, record = drive(repo, "--resume", "--rounds", "4")
    assert code == 0, record
    html, _ = build(repo, capsys, tmp_path)
    text = " ".join(parse(html).text)
    assert "add one" in text and "add hello" in text
    # Rounds without a budget: no cap is shown, never the autopilot default's "of $5.00".
    assert "of $" not in text


def test_a_long_verdict_is_kept_whole_in_the_ledger_and_folded_on_the_page(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The ledger once clipped a verdict's reason at 300 characters, mid-word."""
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--check", "false", "--", "write", "files"]) == 0
    run_hook_inproc(
        "UserPromptSubmit", payload("UserPromptSubmit", repo, prompt="go"), capsys, monkeypatch
    )
    (repo / "file1.txt").write_text("one\n")
    manager.enqueue(review_body("approve"), schema="Review")
    run_hook_inproc("PostToolUse", edit_payload(repo), capsys, monkeypatch)
    reason = "The work goes on. " * 60 + "LAST-WORDS"
    manager.enqueue(verdict_body("continue", reason=reason), schema="Verdict")
    run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    ledger = [json.loads(x) for x in (project_dir(repo) / "events.jsonl").read_text().splitlines()]
    said = [e.get("reason", "") for e in ledger if str(e.get("event", "")).startswith("verdict.")]
    assert any("LAST-WORDS" in r and "characters cut" not in r for r in said), said
    html, _ = build(repo, capsys, tmp_path)
    page = parse(html)
    assert "details" in {tag for tag, _ in page.tags}
    assert "LAST-WORDS" in "".join(page.text)
    # Each run of the red check keeps its own output in the ledger.
    runs = [e for e in ledger if e.get("event") == "checks.run"]
    assert runs and all("tail" in e for e in runs)
