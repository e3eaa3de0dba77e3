"""A hook command for contract tests of the Codex CLI: it records what it was given and
answers from a script.

    python3 codex_probe_hook.py <Event> <dir>

appends ``{"event", "payload", "env"}`` to ``<dir>/calls.jsonl`` and answers with the next
entry of ``<dir>/answers.json`` for its event (``{"Stop": [answer, ...]}``; the last entry
repeats when ``"<Event>:repeat"`` is true). An answer is ``{"stdout": str | object,
"stderr": str, "rc": int}``; no entry means rc 0 with empty output (allow).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# The environment variables worth pinning: what a hook can learn about its session.
WATCHED_ENV = ("CODEX_HOME", "CODEX_THREAD_ID", "CODEX_SESSION_ID", "CODEX_TOOL_CALL_ID")


def main(argv: list[str]) -> int:
    event, folder = argv[0], Path(argv[1])
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"_raw": raw}
    calls = folder / "calls.jsonl"
    seen = 0
    if calls.exists():
        seen = sum(
            1 for line in calls.read_text().splitlines() if json.loads(line)["event"] == event
        )
    env = {name: os.environ.get(name) for name in WATCHED_ENV}
    with calls.open("a") as fh:
        fh.write(json.dumps({"event": event, "payload": payload, "env": env}) + "\n")
    answers_file = folder / "answers.json"
    script = json.loads(answers_file.read_text()) if answers_file.exists() else {}
    answers = script.get(event, [])
    if seen >= len(answers):
        if not (answers and script.get(f"{event}:repeat")):
            return 0
        seen = len(answers) - 1
    answer = answers[seen]
    out = answer.get("stdout", "")
    sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
    sys.stderr.write(answer.get("stderr", ""))
    return int(answer.get("rc", 0))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
