"""logs, loops (and --prune), completion, and --json on plan, ask, doctor and loops."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.commands.logs import follow, line
from autopilot_codex.commands.loops import every, parse_age, prune
from autopilot_codex.paths import active_marker, project_dir, project_key, rails_marker
from tests.conftest import plan_body
from tests.fakes.openai_server import FakeOpenAI

DAY = 86400.0


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def event(name: str, **fields: object) -> str:
    return json.dumps({"ts": "2026-03-01T10:00:00+00:00", "event": name, **fields}) + "\n"


# -- logs ---------------------------------------------------------------------------------------


def test_logs_reads_the_ledger_as_lines_and_json(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project_dir(repo)
    folder.mkdir(parents=True)
    ledger = folder / "events.jsonl"
    ledger.write_text(
        event("plan", decision="running", cost_usd=0.0123)
        + "not json\n"
        + event("verdict.continue", decision="block", reason="keep\ngoing", extra={"x": 1})
    )
    code, out = cli(capsys, "-C", str(repo), "logs")
    assert code == 0
    assert out.splitlines() == [
        "2026-03-01 10:00:00 plan [running] $0.01",
        "2026-03-01 10:00:00 verdict.continue [block] keep going",
        # The loop's figure under the ledger, as every view shows it (no state here: none).
        "Spent: manager $0.00 · implementer $0.00 · total $0.00",
    ]
    code, out = cli(capsys, "-C", str(repo), "logs", "--json", "-n", "1")
    assert [json.loads(x)["extra"] for x in out.splitlines()] == [{"x": 1}]


def test_logs_of_an_empty_ledger_says_so(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "-C", str(repo), "logs") == (
        0,
        "The ledger is empty: no loop has run here yet.\n",
    )


def test_follow_a_growing_truncated_and_rotated_file(tmp_path: Path) -> None:
    """Driven by a bounded number of polls: each `sleep` is where the loop writes next."""
    path = tmp_path / "events.jsonl"
    seen: list[str] = []
    steps: list[Callable[[], object]] = [
        lambda: path.write_text(event("one")),  # created after the follower started
        lambda: _append(path, event("two") + '{"ts": "x", "event": "thr'),  # a torn line
        lambda: _append(path, 'ee"}\n'),  # ... completed
        lambda: path.write_text(event("four")),  # truncated, shorter than what was read
        lambda: _rotate(path, event("five") + event("six")),  # rotated: a new file
    ]

    def sleep(_: float) -> None:
        steps.pop(0)()

    follow(path, lambda r: seen.append(r["event"]), polls=len(steps) + 1, sleep=sleep)
    assert seen == ["one", "two", "three", "four", "five", "six"]


def _append(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)


def _rotate(path: Path, text: str) -> None:
    path.rename(path.with_suffix(".1"))
    path.write_text(text)


def test_logs_follow_prints_new_lines_and_ctrl_c_exits_130(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project_dir(repo)
    folder.mkdir(parents=True)
    ledger = folder / "events.jsonl"
    ledger.write_text(event("plan"))
    polls: Iterator[Callable[[], object]] = iter(
        [lambda: _append(ledger, event("resume")), lambda: None]
    )

    def sleep(_: float) -> None:
        step = next(polls, None)
        if step is None:
            raise KeyboardInterrupt
        step()

    monkeypatch.setattr(time, "sleep", sleep)
    code, out = cli(capsys, "-C", str(repo), "logs", "-f")
    assert code == 130
    assert [x.split()[2] for x in out.splitlines()] == ["plan", "resume"]


def test_line_tolerates_missing_and_odd_fields() -> None:
    assert line({}) == " ?"
    assert line({"event": "x", "cost_usd": "a lot", "decision": 3}) == " x"


# -- loops --------------------------------------------------------------------------------------


def plant(home: Path, worktree: Path, status: str, age_days: float, now: float) -> Path:
    folder = home / "projects" / project_key(worktree)
    folder.mkdir(parents=True)
    state = {
        "goal": "g",
        "status": status,
        "style": "autopilot",
        "worktree": str(worktree),
        "budget_used_usd": 0.5,
    }
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "events.jsonl").write_text(event("plan"))
    then = now - age_days * DAY
    for name in ("state.json", "events.jsonl"):
        os.utime(folder / name, (then, then))
    return folder


def test_loops_lists_every_loop_newest_first(
    isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    plant(isolated, tmp_path / "old", "done", 10, now)
    plant(isolated, tmp_path / "new", "running", 1, now)
    found = every(isolated, now)
    assert [(Path(x.worktree).name, x.status, x.spend_usd) for x in found] == [
        ("new", "running", 0.5),
        ("old", "done", 0.5),
    ]
    code, out = cli(capsys, "loops", "--json")
    assert code == 0 and [x["status"] for x in json.loads(out)] == ["running", "done"]
    code, out = cli(capsys, "loops")
    assert "STATUS" in out and str(tmp_path / "old") in out


def test_prune_removes_only_ended_idle_unguarded_loops(isolated: Path, tmp_path: Path) -> None:
    now = time.time()
    old_done = plant(isolated, tmp_path / "a", "done", 10, now)
    recent = plant(isolated, tmp_path / "b", "aborted", 2, now)
    running = plant(isolated, tmp_path / "c", "running", 30, now)
    paused = plant(isolated, tmp_path / "d", "paused", 30, now)
    guarded = plant(isolated, tmp_path / "e", "stopped", 30, now)
    rails_only = plant(isolated, tmp_path / "f", "aborted", 30, now)
    for marker in (active_marker(tmp_path / "e", isolated), rails_marker(tmp_path / "f", isolated)):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("{}")
    said = prune("7d", dry_run=True, home=isolated, now=now)
    assert said == f"would remove {old_done.name} (done, {tmp_path / 'a'})"
    assert old_done.exists()
    prune("7d", dry_run=False, home=isolated, now=now)
    assert not old_done.exists()
    assert all(p.exists() for p in (recent, running, paused, guarded, rails_only))
    assert prune("1d", dry_run=False, home=isolated, now=now).startswith("removed")
    assert not recent.exists()


def test_prune_follows_no_symlink(isolated: Path, tmp_path: Path) -> None:
    now = time.time()
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    folder = plant(isolated, tmp_path / "a", "done", 10, now)
    (folder / "link").symlink_to(outside)
    # A project entry that is itself a link to a folder outside is never listed, never removed.
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(folder, elsewhere, symlinks=True)
    (isolated / "projects" / "linked-000000000000").symlink_to(elsewhere)
    prune("7d", dry_run=False, home=isolated, now=now)
    assert not folder.exists()
    assert (outside / "keep.txt").read_text() == "mine"
    assert (elsewhere / "state.json").exists()
    assert (isolated / "projects" / "linked-000000000000").is_symlink()


def test_prune_never_touches_a_loop_that_started_meanwhile(
    isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    folder = plant(isolated, tmp_path / "a", "done", 10, now)
    from autopilot_codex.commands import loops

    real = loops.every

    def listed_then_started(home: Path | None = None, now: float | None = None):  # type: ignore[no-untyped-def]
        found = real(home, now)
        marker = active_marker(tmp_path / "a", isolated)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("{}")
        return found

    monkeypatch.setattr(loops, "every", listed_then_started)
    loops.prune("7d", dry_run=False, home=isolated, now=now)
    assert folder.exists()


def test_ages() -> None:
    assert (
        parse_age("7d") == 7 * DAY and parse_age("12h") == 12 * 3600 and parse_age("3") == 3 * DAY
    )
    with pytest.raises(Exception, match="give an age"):
        parse_age("soon")


# -- completion ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_parse(
    shell: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out = cli(capsys, "completion", shell)
    assert code == 0
    for word in ("report", "logs", "loops", "older-than", "implementer", "review"):
        assert word in out, word
    binary = shutil.which(shell)
    if binary is None:
        pytest.skip(f"{shell} is not installed")
    script = tmp_path / f"completion.{shell}"
    script.write_text(out)
    check = subprocess.run([binary, "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_bash_completion_completes_verbs_and_choices(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, out = cli(capsys, "completion", "bash")
    script = tmp_path / "c.bash"
    script.write_text(out)

    def complete(*words: str) -> list[str]:
        words_list = " ".join(f"'{w}'" for w in words)
        program = (
            f"source {script}; COMP_WORDS=({words_list}); COMP_CWORD={len(words) - 1}; "
            "_autopilot_codex; printf '%s\\n' \"${COMPREPLY[@]}\""
        )
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert "report" in complete("autopilot-codex", "rep")
    assert complete("autopilot-codex", "plan", "--review", "") == ["edit", "commit", "stop", "off"]
    assert complete("autopilot-codex", "completion", "z") == ["zsh"]
    # Issue 36: the hosts' plumbing was offered too.
    assert complete("autopilot-codex", "h") == []
    assert "--args-stdin" not in complete("autopilot-codex", "ralph", "--")
    assert "--host" in complete("autopilot-codex", "ralph", "--")


def test_help_shows_no_plumbing_and_every_option_says_what_it_does() -> None:
    """Issue 36: `--help` showed `--args-stdin`, and some verbs' options had no description."""
    import argparse

    from autopilot_codex.cli_parser import parser
    from autopilot_codex.commands.completion import walk
    from autopilot_codex.commands.run import parser as run_parser

    top = parser()
    _, verbs = walk(top, {"run": run_parser()})
    assert "hook" not in [v.name for v in verbs]
    for verb in verbs:
        for option in verb.options:
            assert option.help, (verb.name, option.flags)
            assert "--args-stdin" not in option.flags, verb.name
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("plan", "status", "stop", "resume", "ralph", "cancel"):
        assert "--args-stdin" not in sub.choices[name].format_help(), name


# -- --json -------------------------------------------------------------------------------------


def test_plan_json(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--json", "write", "files")
    assert code == 0
    data = json.loads(out)
    assert (data["goal"], data["status"], [t["id"] for t in data["tasks"]]) == (
        "write files",
        "running",
        ["T1", "T2"],
    )
    assert "Task T1" in data["message"]


def test_doctor_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "-C", str(repo), "doctor", "--json")
    data = json.loads(out)
    assert code == (0 if data["ok"] else 1)
    assert data["checks"] and all({"ok", "text", "note"} <= set(c) for c in data["checks"])


def test_ask_json(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    assert cli(capsys, "-C", str(repo), "plan", "--session-id", "s1", "one", "file")[0] == 0
    answer = {"answer": "use a list", "confidence": "high", "plan_change": None}
    manager.enqueue(answer, schema="Consultation")
    code, out = cli(
        capsys, "-C", str(repo), "ask", "--json", "--session-id", "s1", "which", "type?"
    )
    assert code == 0, out
    data = json.loads(out)
    assert "use a list" in data["answer"] and data["cost_usd"] > 0


def test_the_views_never_load_into_a_hook() -> None:
    program = (
        "import sys, autopilot_codex.cli, autopilot_codex.gate, autopilot_codex.hookrun;"
        "print(sorted(m for m in ('jinja2', 'pygal', 'markupsafe') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_fish_completion_completes_verbs_and_choices(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    _, out = cli(capsys, "completion", "fish")
    script = tmp_path / "c.fish"
    script.write_text(out)

    def complete(line: str) -> list[str]:
        program = f"source {script}; complete -C '{line}'"
        done = subprocess.run([fish, "-c", program], capture_output=True, text=True, check=True)
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert complete("autopilot-codex rep") == ["report"]
    assert sorted(complete("autopilot-codex plan --review ")) == ["commit", "edit", "off", "stop"]
    assert "--older-than" in complete("autopilot-codex loops --")


def test_dry_run_without_prune_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "loops", "--dry-run")
    assert code == 1 and "--dry-run goes with --prune" in out


def test_the_readers_see_a_style_record_beside_the_envelope() -> None:
    """Since schema 3 the autopilot fields sit under `autopilot`: the report still finds them."""
    from autopilot_codex.loopfiles import flat_state

    data = {"style": "autopilot", "status": "running", "autopilot": {"current_task": "T2"}}
    assert flat_state(data)["current_task"] == "T2"
    assert flat_state({"style": "ralph", "status": "done"}) == {"style": "ralph", "status": "done"}
