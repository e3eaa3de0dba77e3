"""The scripted user and the question-capable session, without a real host: the user's
answers from a task's table, and `asking.run_session` against a small stream-json host (a
Python script standing in for `claude -p --input-format stream-json`) that asks for a
permission, a question, or nothing, and then ends, hangs, or spends."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.ab import arms, asking
from bench.ab.context import Context
from bench.ab.tasks import load as load_task
from bench.ab.user import NO_PREFERENCE, ScriptedUser, questions

TASKS = Path(__file__).resolve().parents[2] / "bench" / "ab" / "tasks"

# The stand-in host: reads the prompt, then plays what its first argument says.
HOST = r"""
import json, sys, time
play = sys.argv[1]
def out(event):
    sys.stdout.write(json.dumps(event) + "\n"); sys.stdout.flush()
prompt = json.loads(sys.stdin.readline())
out({"type": "system", "subtype": "init", "session_id": "s-1"})
said = []
if play in ("ask", "permission"):
    tool = "AskUserQuestion" if play == "ask" else "WebFetch"
    given = {"questions": [{"question": "Does the LIMIT count?", "header": "H", "options": []}]}
    out({"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize"}})
    said.append(json.loads(sys.stdin.readline()))
    out({"type": "control_request", "request_id": "r2",
         "request": {"subtype": "can_use_tool", "tool_name": tool, "input": given}})
    said.append(json.loads(sys.stdin.readline()))
if play == "hang":
    time.sleep(600)
if play == "spend":
    message = {"id": "m1", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "hi"}],
               "usage": {"input_tokens": 10000000, "output_tokens": 0}}
    out({"type": "assistant", "message": message})
    time.sleep(600)
out({"type": "result", "subtype": "success", "result": json.dumps([prompt, said]),
     "total_cost_usd": 0.25, "usage": {"input_tokens": 3, "output_tokens": 4}})
if play == "orphan":  # leaves a process behind that holds the stream open
    import subprocess
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    sys.exit(0)
sys.stdin.read()  # the client ends the conversation by closing the input
"""


def test_the_user_answers_by_keyword_and_counts() -> None:
    user = ScriptedUser({"week start": "Sunday.", "start": "Now.", "limit": "Counts."})
    assert user.reply("When does the WEEK START?") == "Sunday."  # the longest keyword wins
    assert user.reply("Should I start?") == "Now."
    assert user.reply("Which name should the file get?") == NO_PREFERENCE
    assert (user.asked, user.answered) == (3, 2)
    assert user.log[-1] == ("Which name should the file get?", NO_PREFERENCE)


def test_every_bundled_question_task_answers_its_own_open_point() -> None:
    for name in ("import-duplicates", "invoice-rounding", "sort-names", "truncate-ellipsis"):
        task = load_task(TASKS / name)
        (keyword,) = task.answers
        user = ScriptedUser(task.answers)
        assert user.reply(f"About the {keyword}: which do you want?") == task.answers[keyword]


def test_questions_are_read_from_question_and_header_never_the_options() -> None:
    given = {
        "questions": [
            {"question": "Which file?", "header": "File", "options": [{"label": "the limit"}]},
            "not a question",
        ]
    }
    assert questions(given) == [("Which file?", "File\nWhich file?")]
    assert questions("nothing") == []
    refused = asking.permission({"tool_name": "Bash", "input": {}}, ScriptedUser({}), "s")
    assert refused == {"behavior": "deny", "message": asking.REFUSED}


def session(tmp_path: Path, play: str, **caps: Any) -> tuple[Any, ScriptedUser, list[str]]:
    script = tmp_path / "host.py"
    script.write_text(HOST)
    user, resumed = ScriptedUser({"limit": "It counts."}), list[str]()
    with (tmp_path / "stderr").open("wb") as stderr:
        result = asking.run_session(
            "the goal",
            cwd=tmp_path,
            env={"AUTOPILOT_CODEX_CLAUDE_CMD": f"{sys.executable} {script} {play}", "PATH": ""},
            extra_args=[],
            wall_args=[],
            timeout_s=caps.get("timeout_s", 120.0),
            budget_usd=caps.get("budget_usd", 5.0),
            user=user,
            stderr=stderr,
            before_answer=resumed.append,
        )
    return result, user, resumed


def test_a_question_is_answered_as_the_tools_own_answers(tmp_path: Path) -> None:
    result, user, resumed = session(tmp_path, "ask")
    assert result.outcome == "ok" and result.cost_usd == 0.25 and result.tokens == 7
    prompt, (initialized, answered) = json.loads(result.last_message)
    assert prompt["message"]["content"] == "the goal"
    assert initialized["response"]["request_id"] == "r1"
    reply = answered["response"]
    assert reply["request_id"] == "r2" and reply["response"]["behavior"] == "allow"
    assert reply["response"]["updatedInput"]["answers"] == {"Does the LIMIT count?": "It counts."}
    assert (user.asked, user.answered, resumed) == (1, 1, ["s-1"])


def test_any_other_permission_is_refused_and_nobody_is_asked(tmp_path: Path) -> None:
    result, user, resumed = session(tmp_path, "permission")
    _prompt, (_init, refused) = json.loads(result.last_message)
    assert refused["response"]["response"] == {"behavior": "deny", "message": asking.REFUSED}
    assert (user.asked, resumed) == (0, [])


def test_the_time_cap_and_the_budget_end_a_session(tmp_path: Path) -> None:
    result, _user, _resumed = session(tmp_path, "hang", timeout_s=2.0)
    assert result.outcome == "timeout" and "no end after 2s" in result.detail
    result, _user, _resumed = session(tmp_path, "spend", budget_usd=1.0)
    assert result.outcome == "budget" and result.cost_usd and result.cost_usd >= 1.0


def test_a_host_gone_with_its_stream_held_open_ends_the_session(tmp_path: Path) -> None:
    result, _user, _resumed = session(tmp_path, "orphan", timeout_s=300.0)
    assert result.outcome == "ok" and result.cost_usd == 0.25


def test_a_host_that_cannot_start_is_a_crashed_session(tmp_path: Path) -> None:
    with (tmp_path / "stderr").open("wb") as stderr:
        result = asking.run_session(
            "goal",
            cwd=tmp_path,
            env={"AUTOPILOT_CODEX_CLAUDE_CMD": str(tmp_path / "missing")},
            extra_args=[],
            wall_args=[],
            timeout_s=5.0,
            budget_usd=1.0,
            user=ScriptedUser({}),
            stderr=stderr,
        )
    assert result.outcome == "crashed" and "cannot start claude" in result.detail


def no_wall(_git_writable: bool) -> list[str]:
    return []


def loop(tmp_path: Path, status: str, *events: str) -> Context:
    folder = tmp_path / "state" / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "state.json").write_text(json.dumps({"status": status}))
    lines = [json.dumps({"event": e}) for e in events] + ["torn {", "[1]"]
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n")
    task = load_task(TASKS / "truncate-ellipsis")
    return Context(
        task, tmp_path, tmp_path, tmp_path / "state", "claude", "m", 1.0, 60.0, {}, no_wall
    )


@pytest.mark.parametrize(
    ("status", "events"),
    [
        ("running", ("question.to_user",)),  # not paused: nothing to resume
        ("paused", ("question.to_user", "question.answered")),  # the manager answered the last
        ("paused", ()),  # paused for another reason: the user's answer does not resume it
    ],
)
def test_the_user_resumes_only_a_loop_paused_for_their_question(
    tmp_path: Path, status: str, events: tuple[str, ...]
) -> None:
    ctx = loop(tmp_path, status, *events)
    arms._resume_for_user(ctx, "s-1")  # would fail: there is no loop the launcher could resume
    assert not (tmp_path / "arm.log").exists()
    assert ctx.questions_by_manager() == events.count("question.answered")
