"""The third host's headless CLI for rounds: `third --headless [flags] --prompt <text>`.

Runs the same scripted steps as `fake_host.py` (FAKE_HOST_SCRIPT), printing its own events:
`{"kind": "act"|"say"|"end", ...}`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.fakes.fake_host import act, next_step  # noqa: E402


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class Third:
    name = "third"

    def __init__(self, argv: list[str]) -> None:
        if "--headless" not in argv or "--prompt" not in argv:
            raise SystemExit("fake third: only --headless --prompt is supported")
        self.prompt = argv[argv.index("--prompt") + 1]
        self.flags = argv[: argv.index("--prompt")]

    def tool(self, name: str, payload: dict[str, Any]) -> None:
        emit({"kind": "act", "tool": name, "args": payload})

    def say(self, text: str) -> None:
        emit({"kind": "say", "text": text})


def main() -> int:
    host = Third(sys.argv[1:])
    script = Path(os.environ["FAKE_HOST_SCRIPT"])
    call, step = next_step(script)
    with Path(f"{script}.calls.jsonl").open("a") as log:
        entry = {
            "call": call,
            "host": host.name,
            "prompt": host.prompt,
            "names": sorted(os.environ),
        }
        log.write(json.dumps(entry) + "\n")
    act(host, step, script)  # type: ignore[arg-type]
    host.say(str(step.get("say", "")))
    emit({"kind": "end", "usd": step.get("cost", 0.02)})
    return int(step.get("exit", 0))


if __name__ == "__main__":
    raise SystemExit(main())
