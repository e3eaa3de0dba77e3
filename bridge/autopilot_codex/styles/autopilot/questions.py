"""The implementer's questions to the user, answered by the manager while a loop runs.

A PreToolUse for the host's question tool (`Host.question_tools`, Claude Code's
`AskUserQuestion`) in the session that owns a running loop becomes a consultation: the question
with its options, the task contract and the open review findings go to the manager, paid,
reserved and capped per task exactly as `ask` (its machinery, its counter). The answer reaches
the implementer in the same turn as the tool's denial reason (a tool error the model reads), so
the user is never asked. The manager may leave the question to the user: then the tool runs as
the host makes it and the loop pauses with the question in `status`. Any other session, a loop
not running, a refused or failed consultation: the tool runs as the host makes it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ...config import Config
from ...contract import PREFIX
from ...errors import BridgeError
from ...hookio import ALLOW, Answer
from ...spend import of_state, usd
from .record import of

if TYPE_CHECKING:
    from ...host import Host
    from ...manager.select import ManagerFactory
    from ...state import State
    from ...store import Store
    from ..context import HookContext

# The manager's words for "only the user can answer this".
ASK_USER = "ASK_THE_USER"
# Claude Code runs a PreToolUse hook for 30 s (hooks/hooks.json): the call must end before.
TIMEOUT_S = 25.0
MAX_QUESTIONS, MAX_OPTIONS, MAX_CHARS = 4, 8, 1_000


def question_text(tool_input: dict[str, Any]) -> str:
    """The questions and their options as plain lines; Claude Code's shape (`questions`, each
    with `question`, `header`, `options[{label, description}]`) or a bare `question`."""
    asked = tool_input.get("questions")
    items = [q for q in asked if isinstance(q, dict)] if isinstance(asked, list) else [tool_input]
    lines = []
    for item in items[:MAX_QUESTIONS]:
        text = _clip(item.get("question"))
        if not text:
            continue
        header = _clip(item.get("header"))
        lines.append(f"Q: {text}" + (f" [{header}]" if header else ""))
        options = item.get("options")
        for option in options[:MAX_OPTIONS] if isinstance(options, list) else []:
            if isinstance(option, dict):
                label, about = _clip(option.get("label")), _clip(option.get("description"))
                lines.append(f"  - {label}" + (f": {about}" if about else ""))
            elif isinstance(option, str):
                lines.append(f"  - {_clip(option)}")
        if item.get("multiSelect") is True:
            lines.append("  (more than one option may be chosen)")
    return "\n".join(lines)


def _clip(value: object) -> str:
    return value.strip()[:MAX_CHARS] if isinstance(value, str) else ""


def owned_and_running(state: State | None, session_id: str | None) -> bool:
    return (
        state is not None
        and state.status == "running"
        and state.owner == "session"
        and bool(session_id)
        and state.session_id == session_id
    )


def answer(ctx: HookContext) -> Answer:
    """The PreToolUse of a question tool (the rails let it through)."""
    question = question_text(ctx.payload.tool_input)
    if not question:
        return ALLOW
    state = ctx.store.load(with_plan=False)
    if not owned_and_running(state, ctx.payload.session_id):
        return ALLOW
    assert state is not None
    return _consult(ctx.store, state, question, ctx.payload.session_id, ctx.config, ctx.host, ctx.manager)


def _consult(
    store: Store,
    state: State,
    question: str,
    session: str | None,
    config: Config,
    host: Host,
    manager: ManagerFactory,
) -> Answer:
    from ...manager.ask_schema import Consultation
    from . import consult

    config = dataclasses.replace(config, timeout_s=min(config.timeout_s, TIMEOUT_S))
    try:
        asked = consult.prepare(store, config, _framed(store, state, question), session)
    except BridgeError as exc:
        return Answer(message=f"{PREFIX} the manager was not asked ({exc}); the question is yours")
    try:
        outcome = manager(asked.model, config).ask(
            Consultation, asked.prompt.instructions, asked.prompt.text
        )
    except BaseException:
        consult.abandon(store, asked, session)
        raise
    try:
        settled = consult.settle(store, asked, outcome, session)
    except BridgeError as exc:
        return Answer(message=f"{PREFIX} {exc}; the question is yours")
    assert outcome.value is not None
    said = outcome.value.answer.strip()
    cost = round(outcome.cost_usd, 6)
    if said.upper().startswith(ASK_USER):
        why = said[len(ASK_USER) :].strip(" :-\n") or "only the user can answer this"
        _pause(store, asked.generation, asked.task_id, question, why, session, cost)
        return Answer(
            message=f"{PREFIX} the manager leaves this question to you ({why}); the loop is "
            f"paused: answer it, then {host.command('resume')}"
        )
    with store.locked():
        store.append_event(
            "question.answered",
            task=asked.task_id,
            question=question,
            answer=said,
            cost_usd=cost,
            session=session,
        )
    return Answer(
        deny=(
            "The user is not asked while the autopilot loop runs; the manager answered for "
            f"them:\n{said}\n\nGo on with this answer. {PREFIX} question {asked.number} for "
            f"task {asked.task_id}, cost {usd(cost)} (spent {of_state(settled).total_text()})."
        )
    )


def _framed(store: Store, state: State, question: str) -> str:
    from .findings_store import view_lines

    try:
        findings = view_lines(store, store.with_plan(state), of(state).current_task)
    except (BridgeError, OSError, ValueError):
        findings = []
    lines = [
        "The implementer asked the USER this through its question tool (the options are its "
        "own). Answer for the user from the goal, the plan and the task contract: name the "
        "option to take and why, in a few lines. If only the user can decide it (a preference "
        "or a fact you do not have), answer exactly "
        f"`{ASK_USER}: <why>` instead.",
        question,
    ]
    if findings:
        lines += ["", *findings]
    return "\n".join(lines)


def _pause(
    store: Store,
    generation: int,
    task: str | None,
    question: str,
    why: str,
    session: str | None,
    cost: float,
) -> None:
    with store.locked():
        state = store.load(with_plan=False)
        if state is None or state.generation != generation or state.status != "running":
            return
        store.save(
            state.evolve(
                status="paused",
                stop_reason=f"the implementer asks the user: {question.splitlines()[0].removeprefix('Q: ')}",
            )
        )
        store.append_event(
            "question.to_user",
            decision="paused",
            task=task,
            question=question,
            reason=why,
            cost_usd=cost,
            session=session,
        )
