"""The one door of an autopilot hook to the world beyond its state: the store and its lock,
git (the diff and its cache key), the manager, the clock, the environment, this process's id
and the ledger's event lines. The Stop's steps reach them only through an `Effects` value (or
the writers here, given the hook's context), so a test hands it a fake clock or sleep.

A Stop's lock hold is one call of the door (`Effects.hold`): it takes the lock and loads the
loop once (as this hook sees it: claimed, charged, its dead callers' slots reclaimed), hands
the body a `Hold`, and as the body leaves writes what the body decided: the event lines, then
the one save that seals them. A body cut short by an exception writes nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ... import contract, gitrepo, guards
from ...checks.tree import tree_hash
from ...guards import Decision
from ...state import State
from . import inflight
from .record import of

if TYPE_CHECKING:
    from ...config import Config
    from ...manager import Outcome
    from ...manager.select import ManagerFactory
    from ...store import Store
    from ..context import HookContext, Limits
    from .findings import Ledger

# The most of one verdict's or review's words the ledger keeps.
LEDGER_TEXT = 20_000
# The tree a verdict acts on (the last hold's look) is not the one the Stop looked at
# (`Effects.looked`): a process left running changed it meanwhile, so no review showed it and
# no check ran on it. This overrules a `done` or a task's advance, as a red check does.
MOVED = (
    "The work tree changed after the manager's look at it (a process still running, or one a "
    "check left, writes it): nothing ends or advances on a tree nobody judged. Stop what "
    "writes the tree, then end your turn."
)


@dataclass(frozen=True)
class Facts:
    """HEAD, the work tree's diff since the task's base (`loop_diff`) and its cache key, and
    the settings in the git directory that run programs or hide changes, as the ledger's
    lines (`git_tamper`, written once per review)."""

    head: str
    diff: gitrepo.Diff
    key: str
    empty: bool
    tamper: tuple[str, ...] = ()


@dataclass(frozen=True)
class Seen:
    """What the verdict's call reads beyond the loop's record, in one look: the loop with its
    plan, git's facts (those given, or read now), the commits since the loop's base, what the
    shadow history found lost this turn, the finding ledger (the prompt's standing findings)
    and the settings the call is made with."""

    state: State
    facts: Facts
    commits: list[str]
    lost: list[str]
    ledger: Ledger
    settings: Config
    # What HEAD holds that the reviewed work tree does not (`unseen_in_head`): "" or why a
    # `done` or a task's advance is overruled.
    unseen: str = ""
    # The trees the call is prepared on, and how its last hold looks again (`looked`).
    looked: tuple[str, ...] = ()
    look: Callable[[], str] | None = None


# An event line the body of a hold leaves for the door to write: its name and fields.
Line = tuple[str, dict[str, object]]


@dataclass
class Hold:
    """One lock hold of a Stop: what the door read as it took the lock, and what the body
    leaves for it to write as the lock is let go, in this order: `lines`, the decisions'
    lines (`decided`, each as `record` writes it), then `save`, which seals them all in the
    hold's one witness write. The finding ledger the rules left (`ledger`) is written first,
    beside the state."""

    # The loop, loaded once; None when there is none (or, for a hold of the owner's,
    # when it is not running or not this session's).
    state: State | None
    # The clock when the lock was taken, and the same moment as the records' time.
    now: float
    at: str
    # The hook's limits (stall, no progress, how the user runs a command), read with the loop.
    limits: Limits
    lines: list[Line] = field(default_factory=list)
    # The tree's digest as the hold began, when asked (`look`): the tree a verdict acts on.
    tree: str = ""
    # The finding ledger as the Stop's rules left it, written beside the state before the lines.
    ledger: Ledger | None = None
    decided: list[tuple[State, Decision, Outcome[Any] | None]] = field(default_factory=list)
    save: State | None = None


@dataclass(frozen=True)
class Effects:
    """Everything the Stop does to the world beyond its state; `of` gives the real ones."""

    store: Store
    manager: ManagerFactory
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    environ: Mapping[str, str]
    pid: int
    head: Callable[[], str]
    # The worktree's diff since a commit, without the loop's own files.
    diff: Callable[[str], gitrepo.Diff]
    commits: Callable[[str], list[str]]
    # The tree's digest as the checks see it (`checks.tree.tree_hash`).
    tree: Callable[[], str]
    # This hook's name on the loop's slot while it holds it (`inflight.new_token`).
    token: str

    @classmethod
    def of(cls, ctx: HookContext) -> Effects:
        store = ctx.store
        return cls(
            store=store,
            manager=ctx.manager,
            # Looked up at each call: a test sets the loop's clock in `inflight`.
            clock=lambda: inflight.clock(),
            sleep=time.sleep,
            environ=os.environ,
            pid=os.getpid(),
            head=lambda: gitrepo.head_sha(store.worktree),
            diff=lambda base: loop_diff(store, base),
            commits=lambda base: gitrepo.commits_since(store.worktree, base),
            tree=lambda: tree_hash(store.worktree, exclude=store.excluded()),
            token=inflight.new_token(),
        )

    @classmethod
    @contextlib.contextmanager
    def opened(
        cls, ctx: HookContext, fx: Effects | None, *, claim: bool = False
    ) -> Iterator[tuple[Effects, Hold]]:
        """A Stop's first hold, the door built as it is taken (`of`, unless given): the
        Stop's first call of the door is its first hold."""
        fx = fx or cls.of(ctx)
        with fx.hold(ctx, claim=claim) as held:
            yield fx, held

    def facts(self, base: str) -> Facts:
        """What a Stop reads of git to judge the final diff, in one go before it decides."""
        diff = self.diff(base)
        tamper = tuple(f.line() for f in diff.findings)
        head = self.head()
        # The head may become the next task's base: its objects kept as they are now.
        gitrepo.keep_base(self.store.worktree, head)
        return Facts(head, diff, diff_key(diff), diff.empty, tamper)

    def judging(self, state: State, *, git: bool) -> tuple[Facts | None, Ledger]:
        """What a Stop reads to judge the turn once no guard has answered, in one look: git's
        facts (`facts`; none without `git`: the host waits for background work) and the
        finding ledger (`findings_store.load`)."""
        from . import findings_store

        facts = self.facts(of(state).task_base_sha) if git else None
        return facts, findings_store.load(self.store, state)

    def seen(
        self, ctx: HookContext, state: State, facts: Facts | None, ledger: Ledger | None = None
    ) -> Seen:
        """What the verdict's prompt and call need (`Seen`), read once, under the hold: the
        facts and the ledger given (read in this hold, not written yet) or read now."""
        from ...config import for_loop
        from ...shadow.hook import lost_at_stop
        from . import findings_store

        state = self.store.with_plan(state)
        facts = facts if facts is not None else self.facts(of(state).task_base_sha)
        ledger = ledger if ledger is not None else findings_store.load(self.store, state)
        # What the loop was planned with (api, server, timeout), unless this hook's
        # environment says otherwise: a session started without the planning shell's
        # variables still works.
        settings = for_loop(state, self.environ, ctx.config)
        commits = self.commits(state.base_sha)
        unseen = unseen_in_head(self.store, facts.head, of(state).task_base_sha)
        lost = lost_at_stop(self.store.dir)
        return Seen(
            state, facts, commits, lost, ledger, settings, unseen, *self.looked(state, facts)
        )

    def looked(self, state: State, facts: Facts) -> tuple[tuple[str, ...], Callable[[], str]]:
        """The tree a verdict's call is prepared on, and how its last hold looks again: the
        reviewed diff's key (read again only for a verdict: a Stop that makes no call pays
        nothing), or, with checks, the trees their run began on and left."""
        if state.checks:
            ran = (h for r in state.last_checks for h in (r.tree_hash, r.tree_hash_after))
            return tuple(ran), self.tree
        base = of(state).task_base_sha
        return (facts.key,), lambda: diff_key(self.diff(base))

    @contextlib.contextmanager
    def hold(
        self,
        ctx: HookContext,
        *,
        owner: bool = True,
        claim: bool = False,
        plan: bool = False,
        look: Callable[[], str] | None = None,
    ) -> Iterator[Hold]:
        """One lock hold: load → (the body decides) → commit.

        `owner`: the loop only if it runs and this hook's session owns it (`owned`); else
        whatever is on disk. `claim`: the Stop's first hold, which sees the loop as this hook
        does: the host recorded (`guards.claim`), what the implementer spent charged
        (`HookContext.charged`, the host's records), and the slots of dead or overdue callers
        taken back (`inflight.reclaimed`, their lines written). `look`: the tree's digest
        taken first, before the lock (`Hold.tree`)."""
        tree = look() if look is not None else ""
        with self.store.hold(with_plan=plan) as stored:
            state = mine(ctx, stored.state) if owner else stored.state
            now = self.clock()
            if state is not None and claim:
                session = ctx.payload.session_id
                state = ctx.charged(guards.claim(state, session, ctx.host.name))
                state = inflight.reclaimed(self.store, session, state, now)
            held = Hold(state, now, iso(now), ctx.limits, tree=tree)
            yield held
            # Only when the body did not raise: what it decided, then the save that seals it,
            # written by the store's hold as it ends.
            if held.ledger is not None and state is not None:
                from . import findings_store

                stored.beside.extend(findings_store.files(self.store, state, held.ledger))
            stored.lines.extend(held.lines)
            stored.lines.extend(line(ctx, *decided) for decided in held.decided)
            stored.save = held.save


def owned(ctx: HookContext, store: Store, *, plan: bool = False) -> State | None:
    """The hold's one load: the running loop this hook's session owns (without its plan
    unless asked)."""
    return mine(ctx, store.load(with_plan=plan))


def mine(ctx: HookContext, state: State | None) -> State | None:
    """`state` when it runs and this hook's session owns it, else None."""
    if state is None or state.status != "running" or not guards.owns(state, ctx.payload.session_id):
        return None
    return state


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch))


def loop_diff(store: Store, base: str) -> gitrepo.Diff:
    """The work tree's diff since `base` without the loop's own files: the one way an
    autopilot hook (the Stop, a background review, a consultation) reads it."""
    return gitrepo.diff_since(
        store.worktree, base, exclude=store.excluded(), baseline=store.nested_path
    )


def diff_key(diff: gitrepo.Diff) -> str:
    """What makes two diffs the same change for the review cache: the same files with the same
    lines. A new file reads differently untracked and committed (git adds its mode and blob
    ids, and sorts it among the tracked files), and committing it must not cost a review."""
    sections = ("\n" + diff.text).split("\ndiff --git ")
    kept = []
    for section in sections:
        lines = [
            _same_line(line)
            for line in section.splitlines()
            if not line.startswith(("index ", "\\ No newline"))
        ]
        kept.append("\n".join(lines))
    text = "\ndiff --git ".join(sorted(kept))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _same_line(line: str) -> str:
    if line.startswith("new file"):
        return "new file"
    if line == "@@ -0,0 +1,1 @@":
        return "@@ -0,0 +1 @@"  # git leaves out a count of one
    return line


def log_git_findings(ctx: HookContext, diff: gitrepo.Diff) -> None:
    """Settings in the git directory that run programs or hide changes: an event of their own
    for the user, once per review (the manager reads them in the diff's closing section)."""
    if diff.findings:
        ctx.store.append_event(
            "git_tamper",
            findings=[f.line() for f in diff.findings],
            session=ctx.payload.session_id,
        )


def record(
    ctx: HookContext, state: State, decision: Decision, outcome: Outcome[Any] | None
) -> None:
    event, fields = line(ctx, state, decision, outcome)
    ctx.store.append_event(event, **fields)


def line(
    ctx: HookContext, state: State, decision: Decision, outcome: Outcome[Any] | None
) -> tuple[str, dict[str, Any]]:
    """A decision's event line: its name and fields."""
    fields: dict[str, Any] = {
        "decision": decision.action,
        # The whole text, for the report and `logs`: only what reaches the implementer is
        # clipped. Bounded all the same, so one answer cannot fill the ledger.
        "reason": contract.clip(decision.reason or decision.message, LEDGER_TEXT),
        "status": state.status,
        "iteration": state.iteration,
        "budget_used_usd": round(state.budget_used_usd, 6),
        "session": ctx.payload.session_id,
    }
    if decision.note:
        fields["note"] = decision.note
    if outcome is not None:
        fields.update(
            tokens_in=outcome.usage.input_tokens,
            tokens_out=outcome.usage.output_tokens,
            cost_usd=round(outcome.cost_usd, 6),
            error=outcome.error,
        )
    return decision.event, fields


def unseen_in_head(store: Store, head: str | None, since: str | None) -> str:
    """What the commits since the task's base put in HEAD that the work tree, the one the
    manager reviews, does not hold: "" when nothing (or no commit yet), else the words that
    overrule a `done` or a task's advance."""
    if not head:
        return ""
    try:
        names = gitrepo.unseen_in_head(store.worktree, head, since, exclude=store.excluded())
    except gitrepo.BridgeError as exc:
        names = (f"(HEAD could not be compared with the work tree: {exc})",)
    if not names:
        return ""
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return (
        f"HEAD ({head[:12]}) holds changes the work tree does not, and the manager reviews the "
        f"work tree: {shown}. Commit the work tree as reviewed (or put those files back as "
        "HEAD has them), then end your turn."
    )
