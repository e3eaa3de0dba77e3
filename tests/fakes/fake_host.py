"""A stand-in for `claude -p --output-format stream-json --verbose` and `codex exec --json`.

Driven by a script (JSON, path in FAKE_HOST_SCRIPT): a list of steps, one per invocation:
  write: {path: text}   files to write in the working directory
  commit: "message"     `git add -A && git commit` afterwards
  shell: "command"      run with bash in the working directory (after the writes, before commit)
  say: "text"           the final assistant message (markers go here)
  cost: 0.01            Claude: total_cost_usd of the result event (null: none reported)
  usage: {...}          the usage of Claude's result event (default: a realistic one; null:
                        none) or of Codex's turn.completed (default: 1000 in, 200 cached, 100 out)
  turns: [{...}, ...]   a usage each first, as one round's stream reports its spend as it goes
                        (then the step as usual; `hang` to wait): Codex a turn.completed each,
                        Claude an assistant message each (of `model`, default claude-sonnet-4-5)
                        with that usage, split over two lines as the real CLI writes it
  exit: 0               exit code
  crash: true           stop mid-stream: no final event, exit code 1 unless `exit` says otherwise
  error: "text"         with crash: the error it writes to stderr (default: an overload)
  recorded: "name"      after the start, the lines of tests/fixtures/<name> as the real CLI
                        wrote them (its final event too), then exit (`exit`, default 1)
  no_result: true       exit 0 without a final event (a torn stream)
  tool_only_final: true the final assistant message is a tool call only
  orphan: true          leave a background process behind that holds stdout open
  hang: true            signal readiness in <script>.running, then sleep (for timeouts, Ctrl-C)
  hooks: [{event, ...}] run the real hook command ($FAKE_HOST_HOOK_CMD hook <event> --host
                        claude) with that payload (cwd and session filled in), as the real host
                        would; each answer goes to <script>.hooks.jsonl
Every call is logged to <script>.calls.jsonl (host, prompt, argv, the driver's `AUTOPILOT_CODEX_*`
settings, and the names of every variable the round got), and the call counter lives in
<script>.count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# What the real CLIs report of one short round: Claude Code's result event counts each token
# kind apart; Codex's input_tokens include the cached ones.
CLAUDE_USAGE = {
    "input_tokens": 6,
    "cache_creation_input_tokens": 1500,
    "cache_read_input_tokens": 12000,
    "output_tokens": 400,
    "server_tool_use": {"web_search_requests": 0},
    "service_tier": "standard",
}
CODEX_USAGE = {"input_tokens": 1000, "cached_input_tokens": 200, "output_tokens": 100}


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def fail(text: str, code: int) -> SystemExit:
    sys.stderr.write(text + "\n")
    return SystemExit(code)


class Claude:
    name = "claude"

    def __init__(self, argv: list[str]) -> None:
        if "-p" not in argv:
            raise fail("fake claude: only -p is supported", 2)
        self.prompt = argv[argv.index("-p") + 1]
        fmt = argv[argv.index("--output-format") + 1] if "--output-format" in argv else "text"
        if fmt == "stream-json" and "--verbose" not in argv:
            # What the real CLI says.
            raise fail(
                "Error: When using --print, --output-format=stream-json requires --verbose", 1
            )
        if fmt != "stream-json":
            raise fail("fake claude: only stream-json output is supported", 2)
        self.n = 0

    def _assistant(self, block: dict[str, Any]) -> None:
        self.n += 1
        message = {"id": f"m{self.n}", "role": "assistant", "content": [block]}
        emit({"type": "assistant", "message": message})

    def start(self, call: int) -> None:
        emit({"type": "system", "subtype": "init", "session_id": f"fake-{call}"})

    def turn(self, usage: dict[str, Any], model: str) -> None:
        """One message with its usage, written as two lines (one per content block) of one id:
        the real CLI repeats the message's usage on each."""
        self.n += 1
        for block in ({"type": "thinking", "thinking": "..."}, {"type": "text", "text": "..."}):
            message = {"id": f"m{self.n}", "model": model, "role": "assistant"}
            emit({"type": "assistant", "message": {**message, "content": [block], "usage": usage}})

    def tool(self, name: str, payload: dict[str, Any]) -> None:
        self._assistant({"type": "tool_use", "id": f"t{self.n}", "name": name, "input": payload})
        result = {"type": "tool_result", "tool_use_id": f"t{self.n}", "content": "ok"}
        emit({"type": "user", "message": {"role": "user", "content": [result]}})

    def say(self, text: str) -> None:
        self._assistant({"type": "text", "text": text})

    def finish(self, step: dict[str, Any], last: str) -> None:
        event: dict[str, Any] = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": last,
            "total_cost_usd": step.get("cost", 0.01),
            "num_turns": 1,
            "usage": step.get("usage", CLAUDE_USAGE),
        }
        emit({k: v for k, v in event.items() if v is not None})


class Codex:
    name = "codex"

    def __init__(self, argv: list[str]) -> None:
        if argv[:1] != ["exec"] or "--json" not in argv:
            raise fail("fake codex: only `exec --json` is supported", 2)
        self.prompt = argv[-1]

    def start(self, call: int) -> None:
        emit({"type": "thread.started", "thread_id": f"fake-{call}"})
        emit({"type": "turn.started"})

    def tool(self, name: str, payload: dict[str, Any]) -> None:
        if name == "Write":
            item = {"type": "file_change", "changes": [{"path": payload["file_path"]}]}
        else:
            item = {"type": "command_execution", "command": payload.get("command", name)}
        emit({"type": "item.started", "item": item})
        emit({"type": "item.completed", "item": item})

    def say(self, text: str) -> None:
        emit({"type": "item.completed", "item": {"type": "agent_message", "text": text}})

    def finish(self, step: dict[str, Any], last: str) -> None:
        usage = step.get("usage") or CODEX_USAGE
        emit({"type": "turn.completed", "usage": usage})


def next_step(script: Path) -> tuple[int, dict[str, Any]]:
    counter = Path(f"{script}.count")
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    steps = json.loads(script.read_text())
    if n >= len(steps):
        raise fail(f"fake host: script exhausted at call {n + 1}", 3)
    return n + 1, steps[n]


def run_hooks(hooks: list[dict[str, Any]], call: int, script: Path) -> None:
    import shlex

    if not hooks:
        return
    command = shlex.split(os.environ["FAKE_HOST_HOOK_CMD"])
    for hook in hooks:
        event = hook["event"]
        data = {"session_id": f"fake-{call}", "cwd": os.getcwd(), "hook_event_name": event}
        data.update({k: v for k, v in hook.items() if k != "event"})
        proc = subprocess.run(
            [*command, "hook", event, "--host", "claude"],
            input=json.dumps(data).encode(),
            capture_output=True,
            timeout=60,
        )
        answer = {"call": call, "event": event, "code": proc.returncode}
        answer.update(stdout=proc.stdout.decode(), stderr=proc.stderr.decode())
        with Path(f"{script}.hooks.jsonl").open("a") as log:
            log.write(json.dumps(answer) + "\n")


def act(host: Claude | Codex, step: dict[str, Any], script: Path) -> None:
    if step.get("orphan"):
        # A background process that inherits stdout and outlives this one.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        Path(f"{script}.orphan").write_text(str(child.pid))
    if step.get("hang"):
        host.tool("Bash", {"command": "sleep"})
        # Renamed into place: a reader that sees the file sees the whole pid, never an empty
        # file caught between its creation and its write.
        ready = Path(f"{script}.running.tmp")
        ready.write_text(str(os.getpid()))
        ready.replace(Path(f"{script}.running"))
        time.sleep(120)
    for name, text in step.get("write", {}).items():
        path = Path(name)
        host.tool("Write", {"file_path": str(path.resolve()), "content": text})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if step.get("shell"):
        host.tool("Bash", {"command": step["shell"]})
        subprocess.run(["bash", "-c", step["shell"]], check=False, capture_output=True)
    if step.get("commit"):
        host.tool("Bash", {"command": "git commit -am ..."})
        subprocess.run(["git", "add", "-A"], check=True, capture_output=True)
        subprocess.run(["git", "commit", "-qm", step["commit"]], check=True, capture_output=True)


def main() -> int:
    argv = sys.argv[1:]
    host: Claude | Codex = Codex(argv) if argv[:1] == ["exec"] else Claude(argv)
    script = Path(os.environ["FAKE_HOST_SCRIPT"])
    call, step = next_step(script)
    keep = {k: v for k, v in os.environ.items() if k.startswith("AUTOPILOT_CODEX_")}
    with Path(f"{script}.calls.jsonl").open("a") as log:
        entry = {"call": call, "host": host.name, "prompt": host.prompt, "env": keep, "argv": argv}
        log.write(json.dumps({**entry, "names": sorted(os.environ)}))
        log.write("\n")
    host.start(call)
    if step.get("recorded"):
        fixture = Path(__file__).resolve().parent.parent / "fixtures" / str(step["recorded"])
        sys.stdout.write(fixture.read_text(encoding="utf-8"))
        return int(step.get("exit", 1))
    for usage in step.get("turns", []):
        if isinstance(host, Claude):
            host.turn(usage, str(step.get("model", "claude-sonnet-4-5")))
        else:
            emit({"type": "turn.completed", "usage": usage})
    act(host, step, script)
    run_hooks(step.get("hooks", []), call, script)
    if step.get("crash"):
        error = str(step.get("error", "API Error: overloaded"))
        sys.stderr.write(f"fake {host.name}: {error}\n")
        return int(step.get("exit", 1))
    say = str(step.get("say", ""))
    host.say(say)
    if step.get("tool_only_final"):
        host.tool("Read", {"file_path": "x"})
        say = ""
    if step.get("no_result"):
        return int(step.get("exit", 0))
    host.finish(step, say)
    return int(step.get("exit", 0))


if __name__ == "__main__":
    raise SystemExit(main())
