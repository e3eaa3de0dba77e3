"""A fake host for lanes: the same stream as `fake_host`, but stateless per worktree, so lanes
running at once never share a script counter.

Each call finds its task in the handoff (`Task <id>:` of the lane's contract). The first call of
a lane writes `<id>.txt` (the id as its text) and commits it, saying
`ready`; a later call says `exit` (the verifier). Every call appends start and end times (and
the task) to LANE_HOST_LOG. With LANE_HOST_BARRIER=<folder>:<n>, a lane's first call waits
until n lanes have reached it: lanes that do not run at once fail the test (after a minute),
instead of a sleep hoping they overlap. With LANE_HOST_HOLD=<id>:<file>, that task's first call
says it is held (`<file>.held`) and waits for <file> (a driver killed meanwhile). With
LANE_HOST_MESSAGES=<n>, a Claude call streams n assistant messages with usage before its work,
$0.001 each at the Claude table's rates (its result still says $0.01): what a round's budget stop
can watch. With LANE_HOST_SNOOP=<file>, each call plays the attacker: it appends to that file its
whole environment and the bytes of every file it can reach beside its work (its worktree, the
repository's git directory, and the folders listed in LANE_HOST_SNOOP_DIRS), for a test to
search for secrets.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from tests.fakes.fake_host import Claude, Codex, act  # noqa: E402

# One message of claude-haiku-4-5 ($1 per million input tokens): $0.001.
MESSAGE = {"input_tokens": 1000, "output_tokens": 0}


def task_id() -> str:
    for handoff in Path(".autopilot-codex/handoffs").glob("*.md"):
        found = re.search(r"Task (\S+):", handoff.read_text())
        if found:
            return found.group(1)
    return "unknown"


def log(event: str, task: str) -> None:
    line = {"event": event, "task": task, "t": time.time(), "pid": os.getpid()}
    line["files"] = sorted(p.name for p in Path().glob("*.txt"))
    # What the host was started with (its prompt among them), for what the lane was given.
    line["argv"] = sys.argv[1:]
    with Path(os.environ["LANE_HOST_LOG"]).open("a") as out:
        out.write(json.dumps(line) + "\n")


def barrier(task: str) -> None:
    spec = os.environ.get("LANE_HOST_BARRIER")
    if not spec:
        return
    folder, n = spec.rsplit(":", 1)
    Path(folder, task).touch()
    give_up = time.monotonic() + 60
    while len(list(Path(folder).iterdir())) < int(n):
        if time.monotonic() > give_up:
            raise SystemExit(f"lane host: {n} lanes never ran at once")
        time.sleep(0.02)


def hold(task: str) -> None:
    """LANE_HOST_HOLD=<task>:<file>: that task's first call waits until the file exists."""
    spec = os.environ.get("LANE_HOST_HOLD", "")
    name, _, release = spec.partition(":")
    if name != task:
        return
    Path(f"{release}.held").write_text(str(os.getpid()))
    while not Path(release).exists():
        time.sleep(0.02)


def snoop() -> None:
    out = os.environ.get("LANE_HOST_SNOOP")
    if not out:
        return
    asked = ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"]
    common = Path(subprocess.run(asked, capture_output=True, text=True, check=True).stdout.strip())
    dirs = [
        Path(),
        common,
        *(Path(d) for d in os.environ.get("LANE_HOST_SNOOP_DIRS", "").split(os.pathsep) if d),
    ]
    with Path(out).open("ab") as found:
        found.write(json.dumps(dict(os.environ)).encode() + b"\n")
        for top in dirs:
            for path in top.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    try:
                        found.write(path.read_bytes())
                    except OSError:
                        continue


def main() -> int:
    argv = sys.argv[1:]
    host: Claude | Codex = Codex(argv) if argv[:1] == ["exec"] else Claude(argv)
    task = task_id()
    log("start", task)
    snoop()
    # LANE_HOST_DELAY: the model's latency, seconds per call (the lanes bench).
    time.sleep(float(os.environ.get("LANE_HOST_DELAY") or 0))
    host.start(1)
    if isinstance(host, Claude):
        for _ in range(int(os.environ.get("LANE_HOST_MESSAGES") or 0)):
            host.turn(MESSAGE, "claude-haiku-4-5")
    # LANE_HOST_FILE: every task writes that one file (two lanes editing the same lines).
    done = Path(os.environ.get("LANE_HOST_FILE") or f"{task}.txt")
    if done.exists() and done.read_text() == task + "\n":
        say = "Every requirement checked.\n::potter(exit)"
    else:
        barrier(task)
        hold(task)
        step = {"write": {done.name: task + "\n"}}
        act(host, {**step, "commit": f"add {task}"}, Path(os.environ["LANE_HOST_LOG"]))
        say = "Done.\n::potter(ready)"
    host.say(say)
    host.finish({}, say)
    log("end", task)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
