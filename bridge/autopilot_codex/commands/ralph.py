"""`ralph`: start a ralph loop, which feeds one prompt back at every Stop of this session until
the completion promise is kept or a cap is reached."""

from __future__ import annotations

from pathlib import Path

from .. import defaults, gitrepo, hosts, meters
from ..checks.evidence import user_checks
from ..checks.run import CheckSpec
from ..contract import PREFIX
from ..errors import BridgeError
from ..state import State
from ..store import Store
from ..styles import a_loop
from ..styles.ralph import reducer
from ..styles.ralph.record import RalphRecord
from ..styles.ralph.reducer import of
from . import begin, entry, replaced, worktree_of

# A prompt is re-sent at every iteration; one this long is a file pasted by mistake.
MAX_PROMPT_CHARS = 100_000


def ralph(
    *,
    cwd: str | Path,
    prompt: str,
    prompt_file: str | None,
    max_iterations: int | None,
    completion_promise: str | None,
    budget_usd: float | None,
    session_id: str | None,
    caps: dict[str, str | None] | None = None,
    host: str = defaults.HOST,
    checks: list[str] | None = None,
    require_wall: bool = False,
) -> str:
    from ..config import load_config
    from .doctor_jail import jail_notes
    from .plan import judge_wall, wall_lines

    # The time and token caps: flags, then the environment, then the config file.
    config = load_config(caps or {})
    text = _prompt(prompt, prompt_file, cwd)
    specs = user_checks(checks)
    worktree = worktree_of(cwd)
    wall = judge_wall(host, worktree, require_wall)
    cap = defaults.RALPH_MAX_ITERATIONS if max_iterations is None else max_iterations
    try:
        state = reducer.start(
            prompt=text,
            now=meters.clock(),
            completion_promise=completion_promise,
            max_iterations=cap,
            session_id=None if session_id in (None, "", "null") else session_id,
            budget_usd=budget_usd,
            max_seconds=config.max_duration,
            worktree=str(worktree),
            host=host,
            checks=specs,
            max_tokens=config.max_tokens,
            wall=wall.level,
            wall_missing=list(wall.missing),
        )
    except ValueError as exc:
        raise BridgeError(str(exc)) from exc
    record = of(state)
    store = Store(worktree)
    with store.locked():
        previous = replaced(store, _running, with_plan=False)
        head = gitrepo.head_sha(worktree)
        generation = (previous.generation + 1) if previous else 1
        state = state.evolve(base_sha=head, generation=generation)
        state, accepted = begin(
            store,
            state,
            "ralph.start",
            prompt=record.prompt,
            max_iterations=cap,
            promise=record.completion_promise,
            wall=wall.level,
        )
    from ..shadow.hook import at_start

    shadow = at_start(store, "ralph")
    started = _started(record, cap, host, "\n".join([*jail_notes(), *wall_lines(wall)]))
    started += _checks_line(specs)
    return started + "".join(f"\n{line}" for line in (shadow, accepted) if line)


def _checks_line(specs: list[CheckSpec]) -> str:
    if not specs:
        return ""
    listed = ", ".join(f"`{s.command}`" for s in specs)
    return f"\n\nA promise is accepted only when these checks pass: {listed}."


def _prompt(words: str, prompt_file: str | None, cwd: str | Path) -> str:
    if prompt_file is not None:
        if words.strip():
            raise BridgeError("give the prompt as words or with --prompt-file, not both")
        path = Path(cwd) / Path(prompt_file).expanduser()
        try:
            words = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BridgeError(f"cannot read the prompt file {path}: {exc}") from exc
    words = words.strip()
    if len(words) > MAX_PROMPT_CHARS:
        raise BridgeError(
            f"the prompt has {len(words)} characters; keep it under {MAX_PROMPT_CHARS} "
            "(point it at a file in the repository instead)"
        )
    return words


def _running(previous: State) -> str:
    """Refused while any loop of any style is running here."""
    return (
        f"{a_loop(previous.style)} is already running here; end it first "
        f"({entry('cancel')} for ralph, {entry('stop')} for autopilot, Ctrl-C for a run)"
    )


def _started(record: RalphRecord, iterations: int, host: str, wall: str = "") -> str:
    cap = str(iterations) if iterations else "unlimited"
    if record.completion_promise:
        finish = (
            f"To finish, output <promise>{record.completion_promise}</promise> on a line of its "
            "own, only when that statement is completely true."
        )
    elif iterations:
        runs = f"{iterations} iteration{'' if iterations == 1 else 's'}"
        finish = f"No completion promise: the loop runs {runs}."
    else:
        finish = "No completion promise and no cap: the loop runs until cancelled or stalled."
    return (
        f"{PREFIX} ralph loop started: iteration 1/{cap}. Each time you end your turn, "
        f"the same prompt comes back until the loop ends. {finish} Cancel with {_cancel(host)}.\n\n"
        + (f"{wall}\n\n" if wall else "")
        + record.prompt
    )


def _cancel(host: str) -> str:
    """How to cancel, for whoever reads the start: read in the host, its slash command; typed
    in a terminal, the terminal's command first (the slash command works only in the session)."""
    slash = hosts.get(host).command("cancel")
    typed = entry("cancel")
    if typed == slash:
        return slash
    return f"{typed} (in a terminal) or {slash} (in {hosts.label(host)})"


def parse_cap(raw: str | None) -> int | None:
    """ralph's cap: a whole number from 0 (no cap, with a budget) to 10000."""
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= 10_000:
        raise BridgeError(f"--max-iterations {raw} is not accepted: a whole number from 0 to 10000")
    return value
