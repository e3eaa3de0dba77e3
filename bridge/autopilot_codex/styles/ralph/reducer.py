"""The ralph style's reducer: what one Stop of a ralph loop means.

Pure functions only (no files, no clock: `now` is passed in), so every branch is a table test.
The engine owns the state file (its presence is the on/off switch), session claiming and the
hook I/O; this module decides what one Stop means.

Promise rule, chosen against the peers' bugs (see docs/peers.md, "brittle completion"):
the promise counts only as a complete `<promise>TEXT</promise>` tag that stands on a line of its
own, outside fenced code blocks, in the last assistant message. The text inside the tag is
whitespace-normalised and compared case-sensitively with the configured promise. So a bare
promise word (claude-code#81827), a sentence that mentions the tag ("I will not output
<promise>DONE</promise> yet"), a tag in backticks and a tag in a fenced block that quotes the
instructions never end the loop; a tag split over lines, padded with spaces or followed by
blank lines does (claude-plugins-official#3632). Of several such tags the first one counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal

from ... import defaults
from ...contract import PREFIX
from ...guards import Decision
from ...hookio import Answer
from ...meters import duration
from ...state import State, planless
from .record import RalphRecord

# Claude Code overrides a Stop hook after 8 blocks in a row; yield well before that.
HOST_BLOCK_CAP = 8
DEFAULT_MAX_ITERATIONS = defaults.RALPH_MAX_ITERATIONS
DEFAULT_STALL_LIMIT = defaults.STALL_LIMIT

Why = Literal["promise", "max_iterations", "stalled", "deadline", "cancelled", "budget", "tokens"]
# How each ending of a Stop is named in the ledger (`ralph.<kind>`); its `Decision.why` is the
# ending's `Why`. A Stop that blocks is "continue".
KIND_OF_WHY: dict[str, str] = {
    "promise": "done",
    "max_iterations": "stopped",
    "stalled": "stalled",
    "deadline": "timed_out",
}

_OPEN, _CLOSE = "<promise>", "</promise>"
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")


def normalise(text: str) -> str:
    return " ".join(text.split())


def validate_start(
    *,
    prompt: str,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    completion_promise: str | None = None,
    budget_usd: float | None = None,
    max_seconds: float = 0.0,
    stall_limit: int = DEFAULT_STALL_LIMIT,
) -> None:
    """Refuse a loop that could not end, or that could never be told it is done."""
    if not prompt.strip():
        raise ValueError("ralph needs a prompt: give it as text or with --prompt-file")
    if max_iterations < 0:
        raise ValueError(f"--max-iterations must be 0 or more, not {max_iterations}")
    capped = (budget_usd is not None and budget_usd > 0) or max_seconds > 0
    if max_iterations == 0 and not capped:
        raise ValueError("--max-iterations 0 (unlimited) needs a budget or a time limit")
    if completion_promise is not None:
        text = normalise(completion_promise)
        if not text:
            raise ValueError("--completion-promise must not be empty")
        if "<" in text or ">" in text:
            raise ValueError("--completion-promise must not contain '<' or '>'")
    if not 1 <= stall_limit < HOST_BLOCK_CAP:
        raise ValueError(f"the stall limit must be between 1 and {HOST_BLOCK_CAP - 1}")


def start(
    *,
    prompt: str,
    now: float,
    completion_promise: str | None = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    session_id: str | None = None,
    budget_usd: float | None = None,
    max_seconds: float = 0.0,
    worktree: str = "",
    head: str = "",
    **envelope: Any,
) -> State:
    """A new loop at its first iteration: its caps in the envelope, its prompt in its record."""
    validate_start(
        prompt=prompt,
        max_iterations=max_iterations,
        completion_promise=completion_promise,
        budget_usd=budget_usd,
        max_seconds=max_seconds,
    )
    promise = normalise(completion_promise) if completion_promise is not None else None
    return planless(
        goal=prompt,
        worktree=worktree,
        head=head,
        style="ralph",
        own=RalphRecord(prompt=prompt, completion_promise=promise),
        # ralph itself spends nothing: 0 is no budget, the guards' cap only when one is given.
        budget_usd=budget_usd or 0.0,
        session_id=session_id or None,
        iteration=1,
        max_iterations=max_iterations,
        max_seconds=max_seconds,
        started_epoch=now,
        **envelope,
    )


def _outside_fences(text: str) -> str:
    """The text with fenced code blocks blanked out (an unclosed fence runs to the end)."""
    kept: list[str] = []
    fence = ""
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            kept.append("")
        elif match:
            fence = match.group(1)
            kept.append("")
        else:
            kept.append(line)
    return "\n".join(kept)


def _tags(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, inside) of each `<promise>...</promise>`, the nearest closing tag each, in
    one pass: the text is the implementer's, and a pattern (`<promise>(.*?)</promise>`) read to
    the end from each of many unclosed tags, the square of the text's length."""
    at = 0
    while (start := text.find(_OPEN, at)) >= 0:
        inside = start + len(_OPEN)
        close = text.find(_CLOSE, inside)
        if close < 0:
            return  # no later tag closes either
        at = close + len(_CLOSE)
        yield start, at, text[inside:close]


def promise_met(last_message: str, promise: str) -> bool:
    """True only for `<promise>PROMISE</promise>` alone on its line(s), outside code fences."""
    wanted = normalise(promise)
    if not wanted or not last_message:
        return False
    text = _outside_fences(last_message.replace("\r\n", "\n").replace("\r", "\n"))
    seen = 0
    for start, end, inside in _tags(text):
        newline = text.rfind("\n", seen, start)
        if newline < 0 and seen:
            seen = end
            continue  # after another tag on its line: a line is never read once per tag
        seen = end
        if text[newline + 1 : start].strip():
            continue
        line_end = text.find("\n", end)
        if text[end : len(text) if line_end < 0 else line_end].strip():
            continue
        # The first tag on its own line is the answer: "<promise>NOT YET</promise>" followed
        # by the real one is not yet (the peer reads the first tag too).
        return normalise(inside) == wanted
    return False


def banner(state: State) -> str:
    cap = str(state.max_iterations) if state.max_iterations else "unlimited"
    return f"Ralph iteration {state.iteration}/{cap}"


def of(state: State) -> RalphRecord:
    """The ralph record of a ralph loop's state (parse_state decoded it by the style's type)."""
    if not isinstance(state.own, RalphRecord):
        raise TypeError(f"a {state.style} loop has no ralph record")
    return state.own


def continue_reason(state: State) -> str:
    """The prompt re-injected at a block, under the iteration banner."""
    ralph = of(state)
    if ralph.completion_promise:
        how = (
            f"To finish, output <promise>{ralph.completion_promise}</promise> on a line of its "
            "own, only when the statement is completely true. Do not output it to leave the loop."
        )
    else:
        how = "No completion promise is set: the loop runs until its iteration limit."
    return f"{PREFIX} {banner(state)} — {how}\n\n{ralph.prompt}"


def on_stop(
    state: State,
    *,
    last_message: str,
    stop_hook_active: bool,
    tool_ran_since_last_block: bool,
    now: float,
    checks_red: str = "",
) -> tuple[State, Decision]:
    """One Stop of an owned, running ralph loop: a block that continues it, or an allow whose
    `why` names how it ends (promise, max_iterations, stalled, deadline).

    The promise is checked before the cap, so a promise kept on the last iteration is reported
    as kept (ralph-orchestrator#369). `checks_red`: the failure text of the user's checks, run
    because the promise was made; "" when they passed or there are none.
    """
    ralph = of(state)
    promise = ralph.completion_promise
    kept = promise is not None and promise_met(last_message, promise)
    if kept and not checks_red:
        message = f"{PREFIX} ralph done: promise kept at iteration {state.iteration}"
        return state, _end("promise", message)
    idle = state.idle_stop_blocks
    if not stop_hook_active or tool_ran_since_last_block:
        # Either the host's chain of blocks is broken or the worker did something: not stuck.
        idle = 0
    state = state.evolve(idle_stop_blocks=idle)
    if state.max_iterations and state.iteration >= state.max_iterations:
        message = f"{PREFIX} ralph stopped: iteration limit {state.max_iterations} reached"
        return state, _end("max_iterations", message)
    began, cap_s = state.started_epoch, state.max_seconds
    if cap_s and now - began >= cap_s:
        spent, cap = duration(now - began), duration(cap_s)
        over = duration(now - began - cap_s)
        message = f"{PREFIX} ralph stopped: time limit reached: {spent} of {cap} ({over} over)"
        return state, _end("deadline", message)
    if idle >= ralph.stall_limit:
        message = f"{PREFIX} ralph stalled: {idle} turns ended in a row without running a tool"
        return state, _end("stalled", message)
    state = state.evolve(iteration=state.iteration + 1, idle_stop_blocks=idle + 1)
    reason = continue_reason(state)
    if kept:
        # The user's checks decide whether a promise is true; a red one blocks like any Stop.
        reason = f"{PREFIX} The promise is not accepted: a check did not pass.\n\n{checks_red}"
        reason += "\n\n" + continue_reason(state)
    return state, Decision("Stop", Answer(block=reason, message=banner(state)))


def _end(why: Why, message: str) -> Decision:
    return Decision("Stop", Answer(message=message), why=why)


def result_record(state: State, why: str, now: float) -> dict[str, Any]:
    """The `last.json` kept after the loop ends: why, how many iterations, how long."""
    ralph = of(state)
    return {
        "style": "ralph",
        "why": why,
        "iterations": state.iteration,
        "max_iterations": state.max_iterations,
        "completion_promise": ralph.completion_promise,
        "prompt": ralph.prompt,
        "session_id": state.session_id,
        "started_at": state.started_epoch,
        "ended_at": now,
        "duration_s": round(max(0.0, now - state.started_epoch), 3),
    }
