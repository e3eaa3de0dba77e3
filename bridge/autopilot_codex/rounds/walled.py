"""The wall around every round: the round's host's boundary, built for the run's worktree.

The driver passes it to each round (`Boundary.round_args`: the host's own flags, a settings
file or config overrides), and `run` judges the same layer before the first round, so a walled
run reads as walled. The round's spec is stricter than a session's: the git directory is
read-only (the driver commits for the round) and every variable of the loop and every
credential the round's own host keeps is out of its shell. Without what the host's sandbox
needs (the system's tools, a system the host covers) the round runs unwalled, which `run`
says as UNGUARDED before the first round.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import cleanenv, hosts
from ..errors import BridgeError
from ..hostwall import spec_for
from ..wall import HIDDEN_ENV, WallSpec, sandbox_usable

if TYPE_CHECKING:
    from ..host import Boundary

# What the driver tells each round's hooks; its shell has no use for them.
LOOP_VARS = ("AUTOPILOT_CODEX_OWNER", "AUTOPILOT_CODEX_RUN", "AUTOPILOT_CODEX_ROUND")


@dataclass(frozen=True)
class RoundWall:
    """The boundary a run's rounds get; `boundary` is None when the sandbox cannot start."""

    host: str
    spec: WallSpec
    boundary: Boundary | None

    def layer(self) -> dict[str, Any] | None:
        """The settings layer the rounds' flags form, for the wall's judge."""
        return None if self.boundary is None else self.boundary.round_layer(self.spec)

    def args(self, scratch: Path) -> list[str]:
        """The flags for one round; files they name go in `scratch` (in the state home)."""
        if self.boundary is None:
            return []
        self.boundary.prepare(self.spec)
        return self.boundary.round_args(self.spec, scratch)


def hidden_env(round_env: Mapping[str, str]) -> tuple[str, ...]:
    """Out of a round's shell: the manager's key and the hosts' keys, every variable of the
    loop, and every credential the round's host keeps for itself (the round's environment
    holds no other: `cleanenv.for_round`)."""
    present = sorted(
        name
        for name in round_env
        if name.startswith("AUTOPILOT_CODEX_") or cleanenv.SECRET_NAME.search(name)
    )
    return tuple(dict.fromkeys([*HIDDEN_ENV, *LOOP_VARS, *present]))


def round_spec(host: str, root: Path, env: Mapping[str, str]) -> WallSpec:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    base = spec_for(root, home, env)
    round_env = {
        **cleanenv.for_round(hosts.get(host).headless(), env),
        **dict.fromkeys(LOOP_VARS, ""),
    }
    return dataclasses.replace(base, hidden_env=hidden_env(round_env), git_writable=False)


def round_wall(
    host: str,
    root: Path,
    env: Mapping[str, str],
    *,
    system: str | None = None,
    which: Callable[[str], str | None] | None = None,
) -> RoundWall:
    boundary = hosts.get(host).boundary()
    usable = boundary is not None and sandbox_usable(boundary.needs_tools, system, which)[0]
    return RoundWall(host, round_spec(host, root, env), boundary if usable else None)


def refuse_loosening(host: str, host_args: Sequence[str] | None) -> None:
    """`--host-arg` adds to the boundary and never replaces it: a flag that would drop or
    loosen it is refused before the run starts, never passed on silently."""
    boundary = hosts.get(host).boundary()
    if boundary is None or not host_args:
        return
    found = boundary.loosening(host_args)
    if found:
        raise BridgeError(
            f"--host-arg {', '.join(found)} would replace or loosen the wall every round runs "
            f"behind, so the run was not started; the wall's own flags are always passed to "
            f"{hosts.label(host)}, and flags that only add to it are kept"
        )
