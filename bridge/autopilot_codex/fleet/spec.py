"""What `submit` puts on the queue: the repository, the goal and the run's options, checked
with `run`'s own parser before anything is enqueued, so a worker never takes a run it would
refuse."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BridgeError

# The contract between `submit` and every worker: the workflow's registered name, its queue.
WORKFLOW = "autopilot-codex.fleet.run"
RUNS_QUEUE = "autopilot-codex-runs"
# The worker decides these: where the run is (its clone), how it is resumed, how it reports.
WORKER_OWNED = ("--cwd", "--resume", "--json")


@dataclass(frozen=True)
class RunSpec:
    """One submitted run. `args`: `run`'s words (goal and options) as given."""

    repo_url: str
    args: tuple[str, ...]
    goal: str
    lanes: int | None
    fleet_id: str = field(default_factory=lambda: f"f{uuid.uuid4().hex[:12]}")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "args": list(self.args)}

    @classmethod
    def read(cls, data: dict[str, Any]) -> RunSpec:
        return cls(
            repo_url=str(data["repo_url"]),
            args=tuple(str(a) for a in data["args"]),
            goal=str(data["goal"]),
            lanes=None if data.get("lanes") is None else int(data["lanes"]),
            fleet_id=str(data["fleet_id"]),
        )

    def run_argv(self, worker_lanes: int) -> list[str]:
        """`run`'s words on a worker: the run's own, its lanes capped by the worker's."""
        lanes = min(self.lanes or worker_lanes, worker_lanes)
        return [*self.args, "--lanes", str(lanes)]


def repository(url: str) -> str:
    """A URL every worker can reach as given; a local folder becomes its absolute file URL
    (workers on this machine reach it, and the test remotes are such folders)."""
    url = url.strip()
    if not url:
        raise BridgeError('submit needs the repository\'s URL: submit <repo-url> "<goal>"')
    if url.startswith("ext::"):
        raise BridgeError(f"{url!r}: the ext:: transport runs a command; give the repository's URL")
    local = Path(url).expanduser()
    if "://" not in url and ":" not in url.split("/", 1)[0] and local.exists():
        return local.resolve().as_uri()
    return url
