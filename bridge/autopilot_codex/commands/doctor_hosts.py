"""`doctor`'s host checks: is the loop installed where each registered host will run it?

Each host gives its own check (`Host.doctor`) and ends in one of four states: ready, its CLI
is missing, our hooks are missing, or our hooks are there but will not run (untrusted or
modified in Codex). Only the last is a fault by itself; a missing host matters only when no
host at all is ready.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .. import hosts
from ..host import ABSENT, BROKEN, MISSING, NOTE, READY, HostReport

__all__ = ["ABSENT", "BROKEN", "MISSING", "NOTE", "READY", "HostReport", "host_reports"]


def host_reports(repo: Path | None, env: Mapping[str, str] | None = None) -> list[HostReport]:
    environ = os.environ if env is None else env
    return [hosts.get(name).doctor(environ, repo) for name in hosts.HOSTS]
