"""Evidence before `done`: the user's own check commands, run by the bridge itself.

Only the user sets checks (`--check CMD`, the config key `checks`); a task's `tests` field is
model output and stays advice. The rails do not apply to the user's commands, but the code they
run was just written by the implementer, so each runs as `bash -c` in its own session (a timeout
kills all it started; no prompt reaches a terminal), with a bounded output tail, a scrubbed
environment (`cleanenv.for_check`: never the manager's key nor a credential the user did not
list in `checks_env`), credential-like values redacted from the kept output (the implementer
reads it), and the loop's files watched (`checks_watch`: a check that changes them fails).

Results are cached by a hash of the tree (`checks_tree.tree_hash`), counting the tree the
checks leave as checked so their by-products do not rerun them at the next Stop (a check
judged by what it wrote itself would be misjudged: a price worth paying).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import cleanenv
from . import proc
from .records import CheckResult as CheckResult
from .records import CheckSpec as CheckSpec
from .records import CheckStatus as CheckStatus
from .specs import spec as spec
from .specs import specs_from_config as specs_from_config
from .tree import tree_hash
from .watch import Watch

if TYPE_CHECKING:
    from ..state import State

DEFAULT_TIMEOUT_S = 300.0
# The kept output: this many lines, and at most this many characters of them.
TAIL_LINES = 60
TAIL_CHARS = 6_000
# A passing check shows only its last lines (the summary) to the manager.
PASS_TAIL_LINES = 5

_REDACT_MIN = 8


def run_checks(
    worktree: Path,
    specs: Sequence[CheckSpec],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    previous: Sequence[CheckResult] | None = None,
    budget_s: float | None = None,
    exclude: tuple[str, ...] = (),
    watch: Watch | None = None,
    env_names: Sequence[str] = (),
) -> list[CheckResult]:
    """Run the user's checks in `worktree`, unless the tree is the one `previous` ran on.

    `timeout_s` bounds each check without its own; `budget_s`, when given, bounds them all
    together (a check with no time left is reported as a timeout, never skipped silently).
    `exclude` keeps paths out of the tree hash (the loop's own files inside the repository).
    When nothing changed, the previous results are returned as they were (same `started_at`):
    comparing them with `previous` tells the caller nothing ran. Never raises for a check that
    fails or cannot run; that is a result. `watch`: the loop's files no check may change (a
    check that does fails, and `watch.tampered` names it); `env_names`: the config's
    `checks_env`, names passed to the checks on top of the scrubbed environment.
    """
    if not specs:
        return []
    before = tree_hash(worktree, exclude=exclude)
    if previous and reusable(previous, specs, before):
        return list(previous)
    env = check_env(os.environ, env_names)
    network = _network()
    redact = _redactor(os.environ)
    deadline = None if budget_s is None else time.monotonic() + budget_s
    runs = []
    for item in specs:
        limit = item.timeout_s or timeout_s
        if deadline is not None:
            limit = min(limit, deadline - time.monotonic())
        at = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        seen = watch.take() if watch is not None else {}
        outcome = proc.run(item.command, worktree, env, limit, network=network)
        changed = watch.settle(item.command, seen) if watch is not None else []
        if changed:
            outcome = replace(outcome, tampered=tuple(changed))
        runs.append((item, at, outcome))
    after = tree_hash(worktree, exclude=exclude)
    return [_result(item, at, outcome, redact, before, after) for item, at, outcome in runs]


def _network() -> bool:
    """The config's `checks_network`: read from the state home's file alone (no environment
    variable sets it), which nothing inside the wall can write."""
    from ..config import load_config

    return load_config(warnings=[]).checks_network


def reusable(previous: Sequence[CheckResult], specs: Sequence[CheckSpec], current: str) -> bool:
    """Whether `previous` answers for these specs on the tree `current`.

    The tree matches when it is the one the checks ran on or the one they left behind. A check
    that could not run is always retried: installing the missing tool changes no file.
    """
    if not current or [r.command for r in previous] != [s.command for s in specs]:
        return False
    if any(r.status == "error" for r in previous):
        return False
    first = previous[0]
    same_run = all(
        (r.tree_hash, r.tree_hash_after) == (first.tree_hash, first.tree_hash_after)
        for r in previous
    )
    return same_run and current in (first.tree_hash, first.tree_hash_after)


check_env = cleanenv.for_check


def passed(results: Sequence[CheckResult]) -> bool:
    """True when every check passed; a check that could not run or timed out did not."""
    return all(r.status == "pass" for r in results)


def evidence_text(results: Sequence[CheckResult]) -> str:
    """The checks' outcome for the verdict prompt. The status lines are the bridge's own; the
    output under each is the command's, written by code under review, so it is quoted as such.
    """
    if not results:
        return ""
    lines = ["Checks the user configured, run by the bridge itself on the current tree:"]
    for r in results:
        lines.append(f"- {status_line(r)}")
        lines += _quoted(r, PASS_TAIL_LINES if r.status == "pass" else TAIL_LINES)
    if not passed(results):
        lines.append("A check that did not pass means the work is not done, whatever was said.")
    return "\n".join(lines)


def failure_reason(results: Sequence[CheckResult]) -> str:
    """The block text the implementer reads when a red check overrules `done` or an advance."""
    failing = [r for r in results if r.status != "pass"]
    if not failing:
        return ""
    lines = ["Not done yet: the bridge ran your project's checks and they did not pass."]
    for r in failing:
        lines.append(f"\n{status_line(r)}")
        lines += _quoted(r, TAIL_LINES)
    lines.append(
        "\nFix the cause (not the check), then stop again; the checks run again once the "
        "tree has changed."
    )
    return "\n".join(lines)


_SAID = {"pass": "passed", "fail": "FAILED", "error": "could NOT run", "timeout": "TIMED OUT"}


def status_line(r: CheckResult) -> str:
    """One line per check, for `status`, the ledger and the texts above."""
    outcome = _SAID[r.status]
    code = "" if r.exit_code is None else f", exit {r.exit_code}"
    note = f" ({r.note})" if r.note else ""
    return f"`{r.command}` {outcome}{code} in {r.duration_s:.1f} s at {r.started_at}{note}"


def status_lines(state: State) -> list[str]:
    """A loop's checks for `status`: the last run of each, or the commands not run yet."""
    if not state.checks:
        return []
    if not state.last_checks:
        return ["Checks: " + ", ".join(f"`{c.command}`" for c in state.checks) + " (not run yet)"]
    return [f"Check: {status_line(r)}" for r in state.last_checks]


def _quoted(r: CheckResult, limit: int) -> list[str]:
    kept = r.tail.splitlines()[-limit:]
    if not kept:
        return ["  (no output)"]
    # The final newline is not kept, so one byte more than the tail is still the whole output.
    cut = len(kept) < len(r.tail.splitlines()) or r.output_bytes > len(r.tail.encode()) + 1
    head = f"last {len(kept)} lines of {r.output_bytes} bytes of output" if cut else "output"
    return [f"  {head}:", *(f"  | {line}" for line in kept)]


def _result(
    item: CheckSpec,
    started_at: str,
    outcome: proc.Outcome,
    redact: _Redact,
    before: str,
    after: str,
) -> CheckResult:
    status, note = _judge(outcome)
    return CheckResult(
        command=item.command,
        exit_code=None if outcome.exit_code is None or outcome.exit_code < 0 else outcome.exit_code,
        status=status,
        duration_s=round(outcome.duration_s, 3),
        tail=redact(_tail(outcome.output)),
        output_bytes=outcome.output_bytes,
        note=note,
        started_at=started_at,
        tree_hash=before,
        tree_hash_after=after,
    )


def _judge(outcome: proc.Outcome) -> tuple[CheckStatus, str]:
    code = outcome.exit_code
    if outcome.tampered:
        return "fail", (
            f"it changed the loop's own {', '.join(outcome.tampered)}: tampering; "
            "put back as it was"
        )
    if outcome.start_error:
        return "error", f"could not start: {outcome.start_error}"
    if outcome.skipped:
        return "timeout", "not started: the checks' time budget was spent"
    if outcome.timed_out:
        return "timeout", f"stopped after {round(outcome.limit_s, 1):g} s, its time limit"
    if code == 0:
        return "pass", ""
    if code == 127:
        return "error", "command not found (exit 127): install it or fix the check"
    if code == 126:
        return "error", "command not executable (exit 126)"
    if code is not None and code < 0:
        return "fail", f"killed by signal {-code}"
    return "fail", ""


def _tail(output: bytes) -> str:
    text = output.decode("utf-8", "replace").replace("\r\n", "\n")
    return "\n".join(text.rstrip("\n").splitlines()[-TAIL_LINES:])[-TAIL_CHARS:]


class _Redact:
    def __init__(self, values: list[str]) -> None:
        # Longest first, so a value containing another is replaced whole.
        self.values = sorted(set(values), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "[REDACTED]")
        return text


def _redactor(environ: Mapping[str, str]) -> _Redact:
    return _Redact(
        [
            value
            for name, value in environ.items()
            if len(value) >= _REDACT_MIN and cleanenv.SECRET_NAME.search(name)
        ]
    )
