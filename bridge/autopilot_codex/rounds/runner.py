"""One round: a fresh host process, its JSONL stream read line by line, a timeout, Ctrl-C,
and the budget.

The child gets its own process group, so a timeout or Ctrl-C ends it and every tool process
it started, and a Ctrl-C in the terminal reaches only the driver, which then ends the child.
The budget is watched as the stream goes: as soon as the round's spend reaches what the run
has left (`spent`), the round is ended the same way, so a round passes the budget by at most
what one streamed message adds. That spend is the larger of what the host has reported and
what its stream's messages are estimated to cost so far (`Headless.estimate`: Claude Code
reports its dollars only in its final event, but each message's usage as it goes); the
round's cost is never less than that estimate. A host whose stream tells neither before its
final event gets no such stop (`streamed` says which a round was).
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .. import hosts, nofollow, searchpath
from ..errors import BridgeError
from ..gitbinary import system_program
from ..host import Estimate
from ..stream import StreamState
from .rollout import Outcome

if TYPE_CHECKING:
    from ..host import Headless
    from ..prices import Price

KILL_GRACE_S = 3.0
SETPRIV = ("/usr/bin/setpriv", "/bin/setpriv")
# After the host exits, how long a stream may stay open (held by a process it left behind).
ORPHAN_GRACE_S = 2.0
POLL_S = 0.2
# How long the reader may take to read what an ended round left in its stream.
READ_REST_S = 1.0


@dataclass(frozen=True)
class RoundResult:
    outcome: Outcome
    exit_code: int | None
    last_message: str
    last_action: str
    cost_usd: float | None
    tokens: int | None
    detail: str
    # The model priced at the dearest row of the host's table ("" when none was).
    unpriced: str = ""
    # The host's error fields named a rate limit or an overload (`StreamState.rate_limited`).
    rate_limited: bool = False
    # The stream told a spend (the host's dollars, or messages' usage priced: `Estimate`)
    # before its last event, so the budget was watched during the round, not only after it.
    streamed: bool = False


def headless(host: str) -> Headless:
    """The host's headless runner; a BridgeError for a host that has none."""
    runner = hosts.get(host).headless()
    if runner is None:
        raise BridgeError(f"{host} cannot run rounds; use one of: {', '.join(implementers())}")
    return runner


def implementers() -> tuple[str, ...]:
    """The hosts that can run a round without a terminal: `run --implementer`'s choices."""
    return tuple(n for n in hosts.HOSTS if hosts.get(n).headless() is not None)


def host_base(host: str, runner: Headless, env: Mapping[str, str]) -> list[str]:
    """The host's executable; `AUTOPILOT_CODEX_<HOST>_CMD` overrides it (a wrapper, a fake)."""
    override = env.get(f"AUTOPILOT_CODEX_{host.upper()}_CMD", "").strip()
    return shlex.split(override) if override else [runner.executable]


def _pump(stream: IO[bytes], lines: queue.Queue[str | None]) -> None:
    try:
        for raw in stream:
            lines.put(raw.decode("utf-8", "replace"))
    finally:
        lines.put(None)


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
    elif proc.poll() is None:
        proc.kill()


def _end(proc: subprocess.Popen[bytes]) -> None:
    """End the child's whole process group: TERM, a grace period, then KILL for what is left.

    Also after a normal exit: a background process a round left behind (a dev server, say)
    would otherwise outlive it, hold its stream open and disturb the next round.
    """
    _signal_group(proc, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_S)
    _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
    proc.wait()


def _spawn(
    cmd: list[str], cwd: Path, env: Mapping[str, str], log: IO[bytes]
) -> subprocess.Popen[bytes]:
    extra: dict[str, object] = {}
    if os.name == "posix":
        extra["start_new_session"] = True
    else:
        extra["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    try:
        return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
            _dies_with_driver(cmd, env, cwd),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            **extra,
        )
    except OSError as exc:
        raise BridgeError(f"cannot start {cmd[0]}: {exc.strerror or exc}") from exc


def _dies_with_driver(cmd: list[str], env: Mapping[str, str], cwd: Path) -> list[str]:
    """The host started so that it is killed when the driver dies (Linux: `setpriv --pdeathsig`).

    The host has a session of its own, so a driver killed with -9 (or by the OOM killer) took
    nothing with it: the implementer went on working and spending, unsupervised and uncounted,
    and a resumed run started a second implementer in the same work tree. The tools the host
    started are left to end on their own (they are in its group, which nothing then signals).
    The executable is looked up first, never in a folder the implementer writes (a relative
    PATH entry, one inside the work tree): a missing one stays a round that cannot start."""
    found = searchpath.which(cmd[0], env.get("PATH", os.defpath), cwd)
    if found is None:
        raise BridgeError(f"cannot start {cmd[0]}: not found")
    setpriv = system_program(SETPRIV) if sys.platform == "linux" else None
    if setpriv is None:
        return cmd
    return [setpriv, "--pdeathsig", "KILL", "--", found, *cmd[1:]]


def run_round(
    host: str,
    prompt: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stderr_log: str,
    extra_args: Sequence[str] | None = None,
    wall_args: Sequence[str] = (),
    on_update: Callable[[StreamState], None] = lambda _s: None,
    own_prices: Mapping[str, Price] | None = None,
    spent: Callable[[float], bool] = lambda _usd: False,
) -> RoundResult:
    """Run one round to its end; a failure to start is a `crashed` round, never an exception.
    `wall_args` are the boundary's flags, passed whatever `extra_args` say. `own_prices`: the
    user's rows, before the host's table, for a host whose stream reports only tokens.
    `spent(usd)`: whether the round's spend so far reaches the budget; the round then ends
    as `budget`."""
    runner = headless(host)
    cmd = runner.command(prompt, host_base(host, runner, env), extra_args, wall_args)
    own, spend = own_prices or {}, Estimate()

    def read(state: StreamState, event: dict[str, Any]) -> None:
        runner.read(state, event)
        runner.estimate(spend, event, own)

    state = StreamState(host, reader=read, model=runner.model_of(cmd, env), own_prices=own)
    # In the work tree, where a round can plant a link: opened without following one.
    with os.fdopen(nofollow.open_write(cwd, stderr_log), "wb") as log:
        try:
            proc = _spawn(cmd, cwd, env, log)
        except BridgeError as exc:
            return RoundResult("crashed", None, "", "", None, None, str(exc))
        watch = _Watch(timeout_s, on_update, spent, spend)
        outcome = _follow(proc, state, watch)
    cost = watch.cost(state)
    code = proc.returncode
    detail = state.error
    if outcome == "ok" and code != 0:
        outcome, detail = (
            "crashed",
            f"exit code {code}" + (f", {state.error}" if state.error else ""),
        )
    elif outcome == "ok" and (not state.finished or state.error):
        outcome, detail = "stream_error", state.error or "the stream ended without a final event"
    elif outcome == "timeout":
        detail = f"no end after {timeout_s:.0f}s"
    elif outcome == "budget":
        detail = f"stopped at ${cost or 0.0:.4f} spent: the budget is used up"
    if outcome != "ok" and not detail:
        detail = outcome
    if outcome != "ok":
        detail += _stderr_tail(cwd, stderr_log)
    return RoundResult(
        outcome,
        code,
        state.last_message,
        state.last_action,
        cost,
        state.tokens,
        detail,
        state.unpriced or spend.unpriced,
        state.rate_limited,
        0 < watch.priced_at < state.events,
    )


@dataclass
class _Watch:
    timeout_s: float
    on_update: Callable[[StreamState], None]
    spent: Callable[[float], bool]
    spend: Estimate
    # The count of events when the stream first told a spend (0: not yet).
    priced_at: int = 0

    def cost(self, state: StreamState) -> float | None:
        """The round's spend so far: the host's figure, never less than the estimate (None
        while neither has said anything)."""
        if state.cost_usd is None and not self.spend.usd:
            return None
        return max(state.cost_usd or 0.0, self.spend.usd)

    def stops(self, state: StreamState, ended: bool) -> bool:
        """Whether the spend streamed so far reaches the budget while the round goes on.
        `ended`: the stream had its final event before this one. The event that ends it is
        no reason to stop: the round is done, and its work and markers count."""
        cost = self.cost(state)
        if cost is None:
            return False
        self.priced_at = self.priced_at or state.events
        return (ended or not state.finished) and self.spent(cost)


def _follow(proc: subprocess.Popen[bytes], state: StreamState, watch: _Watch) -> Outcome:
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True)
    reader.start()
    try:
        return _watch(proc, state, watch, lines)
    finally:
        # The group is ended: the reader meets the stream's end and the pipe can be closed.
        # A stream still held by a process that left the group stays with its reader.
        reader.join(timeout=READ_REST_S)
        if not reader.is_alive():
            proc.stdout.close()


def _watch(
    proc: subprocess.Popen[bytes], state: StreamState, watch: _Watch, lines: queue.Queue[str | None]
) -> Outcome:
    deadline, on_update = time.monotonic() + watch.timeout_s, watch.on_update
    exited_at: float | None = None
    try:
        while True:
            if time.monotonic() >= deadline:
                _end(proc)
                return "timeout"
            try:
                line = lines.get(timeout=POLL_S)
            except queue.Empty:
                on_update(state)
                if proc.poll() is not None:
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at > ORPHAN_GRACE_S:
                        break  # the host is gone; something it started holds the stream open
                continue
            if line is None:
                break
            ended = state.finished
            if line.strip() and state.feed_line(line):
                on_update(state)
                if watch.stops(state, ended):
                    _end(proc)
                    return "budget"
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _end(proc)
            return "timeout"
        _end(proc)
        return "ok"
    except KeyboardInterrupt:
        _end(proc)
        return "interrupted"


def _stderr_tail(cwd: Path, rel: str) -> str:
    kind, data = nofollow.read(cwd, rel)
    text = (data if kind == "file" and data else b"")[-2000:].decode("utf-8", "replace").strip()
    last = text.splitlines()[-1] if text else ""
    return f": {last[:200]}" if last else ""
