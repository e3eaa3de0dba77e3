"""A stand-in for `claude -p --output-format stream-json --verbose`, driven by a script.

The script (JSON, path in FAKE_CLAUDE_SCRIPT) is a list of steps, one per invocation:
  write: {path: text}   files to write in the working directory
  commit: "message"     `git add -A && git commit` afterwards
  say: "text"           the final assistant message (markers go here)
  cost: 0.01            total_cost_usd of the result event
  exit: 0               exit code
  crash: true           stop mid-stream: no result event, exit code 1 unless `exit` says otherwise
  no_result: true       exit 0 without a result event (a torn stream)
  tool_only_final: true the final assistant message is a tool call only
  orphan: true          leave a background process behind that holds stdout open
  hang: true            signal readiness in <script>.running, then sleep (for timeouts, Ctrl-C)
Every call is logged to <script>.calls.jsonl (prompt and the driver's environment), and the
call counter lives in <script>.count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def assistant(mid: str, block: dict[str, Any]) -> None:
    emit({"type": "assistant", "message": {"id": mid, "role": "assistant", "content": [block]}})


def parse_args(argv: list[str]) -> str:
    if "-p" not in argv:
        sys.stderr.write("fake claude: only -p is supported\n")
        raise SystemExit(2)
    prompt = argv[argv.index("-p") + 1]
    fmt = argv[argv.index("--output-format") + 1] if "--output-format" in argv else "text"
    if fmt == "stream-json" and "--verbose" not in argv:
        # What the real CLI says.
        sys.stderr.write(
            "Error: When using --print, --output-format=stream-json requires --verbose\n"
        )
        raise SystemExit(1)
    if fmt != "stream-json":
        sys.stderr.write("fake claude: only stream-json output is supported\n")
        raise SystemExit(2)
    return prompt


def next_step(script: Path) -> tuple[int, dict[str, Any]]:
    counter = Path(f"{script}.count")
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    steps = json.loads(script.read_text())
    if n >= len(steps):
        sys.stderr.write(f"fake claude: script exhausted at call {n + 1}\n")
        raise SystemExit(3)
    return n, steps[n]


def main() -> int:
    prompt = parse_args(sys.argv[1:])
    script = Path(os.environ["FAKE_CLAUDE_SCRIPT"])
    n, step = next_step(script)
    keep = {k: v for k, v in os.environ.items() if k.startswith("AUTOPILOT_CODEX_")}
    with Path(f"{script}.calls.jsonl").open("a") as log:
        log.write(json.dumps({"call": n + 1, "prompt": prompt, "env": keep}) + "\n")
    emit({"type": "system", "subtype": "init", "session_id": f"fake-{n + 1}", "cwd": os.getcwd()})
    if step.get("orphan"):
        # A background process that inherits stdout and outlives this one.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        Path(f"{script}.orphan").write_text(str(child.pid))
    if step.get("hang"):
        assistant(
            "m0", {"type": "tool_use", "id": "t0", "name": "Bash", "input": {"command": "sleep"}}
        )
        Path(f"{script}.running").write_text(str(os.getpid()))
        time.sleep(120)
    for i, (name, text) in enumerate(step.get("write", {}).items()):
        path = Path(name)
        assistant(
            f"m{i}",
            {
                "type": "tool_use",
                "id": f"w{i}",
                "name": "Write",
                "input": {"file_path": str(path.resolve()), "content": text},
            },
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"w{i}", "content": "ok"}],
                },
            }
        )
    if step.get("commit"):
        assistant(
            "mc",
            {
                "type": "tool_use",
                "id": "c",
                "name": "Bash",
                "input": {"command": "git commit -am ..."},
            },
        )
        subprocess.run(["git", "add", "-A"], check=True, capture_output=True)
        subprocess.run(["git", "commit", "-qm", step["commit"]], check=True, capture_output=True)
    if step.get("crash"):
        sys.stderr.write("fake claude: API Error: overloaded\n")
        return int(step.get("exit", 1))
    say = str(step.get("say", ""))
    if step.get("tool_only_final"):
        assistant("mf-text", {"type": "text", "text": say})
        assistant(
            "mf", {"type": "tool_use", "id": "f", "name": "Read", "input": {"file_path": "x"}}
        )
        say = ""
    else:
        assistant("mf", {"type": "text", "text": say})
    if step.get("no_result"):
        return int(step.get("exit", 0))
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": say,
            "total_cost_usd": step.get("cost", 0.01),
            "num_turns": 1,
        }
    )
    return int(step.get("exit", 0))


if __name__ == "__main__":
    raise SystemExit(main())
