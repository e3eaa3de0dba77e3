"""A session that ended while its loop still ran (the host's SessionEnd hook).

A loop's Stop hook decides whether its session may stop; a session that ends any other way (the
user quit or cleared it, `--max-turns` cut a headless run, the Stop hook timed out) leaves a
loop that says `running` with nobody to drive it. The owner's SessionEnd records that once, as
`session.ended` in the ledger, and tells the user; `status` and `watch` show it. The loop itself
is left as it is: `resume --session-id NEW` hands it to a new session.

The host gives SessionEnd little time (Claude Code 1.5 s by default), so this only appends one
line and starts the detached notifier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .hookio import ALLOW, Answer, HookInput

if TYPE_CHECKING:
    from .host import Host
    from .store import Store

EVENT = "session.ended"


def ended(store: Store, payload: HookInput, host: Host) -> Answer:
    session = payload.session_id
    if not session:
        return ALLOW
    with store.locked():
        state = store.load(with_plan=False)
        if (
            state is None
            or state.status != "running"
            or state.owner != "session"
            or state.session_id != session
        ):
            return ALLOW
        # The same session ends once; a repeated call must not say so twice.
        if any(
            e.get("event") == EVENT and e.get("session") == session for e in store.tail_events(5)
        ):
            return ALLOW
        reason = payload.reason[:100] or "unknown"
        store.append_event(EVENT, session=session, reason=reason, host=host.name)
    from .notify import notify

    notify(
        {
            "event": EVENT,
            "status": state.status,
            "reason": reason,
            "worktree": state.worktree,
            "style": state.style,
            "task": state.own.working_on() if state.own else "",
            "session": session,
        },
        f"autopilot-codex: {state.worktree}: its session ended ({reason}) while the loop ran; "
        f"{host.command('resume')} --session-id NEW hands it to a new session",
    )
    return ALLOW


def line(events: list[dict[str, object]], session: str | None) -> str:
    """`status`'s word on it, while the session that ended still owns the loop (a resume
    with a new session ends the matter)."""
    last = next((e for e in reversed(events) if e.get("event") == EVENT), None)
    if last is None or not session or last.get("session") != session:
        return ""
    return (
        f"Session ended: {session} ({last.get('reason')}) at {last.get('ts')}, without a Stop; "
        "the loop waits for a session (resume --session-id NEW)"
    )
