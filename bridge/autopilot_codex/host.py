"""What a host is to the rest of the bridge: the `Host` protocol, the small records it hands
out (its headless runner, its installer, its doctor report), and `HostSet`, every registered
host as one.

Everything host-specific sits behind these members, so the hook path, the rails, the rounds
driver, `install` and `doctor` ask the host instead of knowing Claude Code or Codex. Standard
library only: the hook path imports it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .wall import CREDENTIALS_IN_HOME, GIT_RUN_FILES, WallSpec

if TYPE_CHECKING:
    from .hookio import Answer, HookInput
    from .prices import Price
    from .stream import StreamState
    from .wall import WallStatus

# A command line, or a part of one.
Argv = Sequence[str]

# A doctor line's state. READY lines passed; NOTE is a fact worth knowing, never a fault; any
# other is a problem, its remedy in its text.
READY, ABSENT, MISSING, BROKEN, NOTE = "ready", "absent", "missing", "broken", "note"


@dataclass(frozen=True)
class HostReport:
    """Is the loop installed where this host will run it: ready, its CLI is missing, our hooks
    are missing, or our hooks are there but will not run."""

    host: str
    state: str
    lines: tuple[tuple[str, str], ...]


def cli_absent(label: str, text: str) -> HostReport:
    """A host's report when its CLI is not on PATH: `text` says how to install it."""
    return HostReport(label, ABSENT, ((ABSENT, text),))


@dataclass
class Estimate:
    """A round's spend as its stream has told it so far, before (or without) the host's own
    total: each message's priced usage, a message counted once by its id, at the most it was
    said to cost. It only grows: no line of the stream can lower it."""

    usd: float = 0.0
    by_message: dict[str, float] = field(default_factory=dict)
    # A model the host's table does not know, priced at its dearest row ("" when none was).
    unpriced: str = ""

    def add(self, message_id: str | None, usd: float) -> None:
        """`message_id` None: a message the stream names no id for, counted as it comes."""
        before = self.by_message.get(message_id, 0.0) if message_id is not None else 0.0
        if usd > before:
            self.usd += usd - before
            if message_id is not None:
                self.by_message[message_id] = usd


class Headless(Protocol):
    """How a round starts this host without a terminal and reads its JSONL stream."""

    # The executable's name; `AUTOPILOT_CODEX_<HOST>_CMD` replaces it (a wrapper, a fake).
    executable: str

    def command(self, prompt: str, base: Argv, extra: Argv | None, wall: Argv = ()) -> list[str]:
        """The whole command line; `extra` replaces the default permission flags, `wall` (the
        boundary's flags) is always there and replaces any default flag that picks a sandbox."""

    def read(self, state: StreamState, event: dict[str, Any]) -> None:
        """Fold one stream event into the round's state (message, action, cost, end, error)."""

    def estimate(self, spend: Estimate, event: dict[str, Any], own: Mapping[str, Price]) -> None:
        """Add what one stream event says the round has spent so far (`own`: the user's price
        rows first), so the budget can stop a round whose host reports its dollars only in its
        final event; nothing for a host whose stream tells no spend before its end."""

    def model_of(self, cmd: Sequence[str], environ: Mapping[str, str]) -> str:
        """The model a round of this command line runs, for a host whose stream reports
        tokens and no dollars (the bridge prices them); "" when it is not named or the host
        prices its own round."""

    def credentials(self, environ: Mapping[str, str]) -> tuple[set[str], tuple[str, ...]]:
        """(names, prefixes) of the variables the CLI needs to reach its own model: a round
        keeps these and drops every other credential."""


class Installer(Protocol):
    """A host whose hooks the bridge writes itself (`autopilot-codex install <host>`)."""

    def install(self, scope: str, env: Mapping[str, str], cwd: Path) -> list[str]: ...

    def uninstall(self, scope: str, env: Mapping[str, str], cwd: Path) -> list[str]: ...


class Boundary(Protocol):
    """The sandbox a host keeps the implementer in: the settings that wall a round in, how the
    host's own settings files are read and judged, and the flags that would undo it."""

    # The name of the layer a caller's own flags (`--settings`, `-c`) form in `layers`.
    flag_layer: str
    # Does the sandbox need the system's tools (bubblewrap, socat)? False: the host brings its
    # own and needs only a system it covers.
    needs_tools: bool
    # Does `user_wall` write the user's own settings (so `plan` adds a new repository's paths
    # after a guarded install)? False: it prints the lines for the user to put in.
    writes_user_wall: bool

    def user_wall(self, spec: WallSpec, named: bool, env: Mapping[str, str]) -> list[str]:
        """`install`'s wall in the user's own settings of this host, as lines: written (after a
        backup) and said, or printed. Not `named`: `spec`'s worktree stands for none, and the
        wall holds everything but a worktree's own paths."""

    def unwall(self) -> list[str]:
        """`uninstall`: take back what `user_wall` wrote, one line per settings file."""

    def layers(
        self, worktree: Path, home: Path, env: Mapping[str, str], system: str
    ) -> dict[str, dict[str, Any]]:
        """The host's settings layers, read from their files, by layer name."""

    def judge(self, spec: WallSpec, layers: Mapping[str, Mapping[str, Any]]) -> WallStatus:
        """How walled an implementer is under these layers, each missing piece in words."""

    def fixes(
        self, status: WallStatus, home: Path, env: Mapping[str, str], system: str
    ) -> list[str]:
        """The commands or steps that fix what `status` lists."""

    def round_layer(self, spec: WallSpec) -> dict[str, Any]:
        """The boundary as the layer a round's flags form (what `judge` reads as `flag_layer`)."""

    def round_args(self, spec: WallSpec, scratch: Path) -> list[str]:
        """The flags that pass `round_layer` to the host; a file it needs goes in `scratch`, a
        folder the implementer cannot read or write."""

    def loosening(self, args: Sequence[str]) -> list[str]:
        """The caller's own host flags that would replace or loosen the boundary."""

    def prepare(self, spec: WallSpec) -> None:
        """Ready the worktree for a walled run (Codex: create the protected folders)."""


@dataclass(frozen=True)
class SpendRead:
    """What a host recorded of its own spend since the last look: where to look next time
    (`offset`, and the ids of the last messages seen, which a host may write twice), and the
    priced spend and tokens of what was new. `unknown`: models priced at the dearest row.

    Also what the next look needs to trust the record and to count it once: `head`, a digest
    of the bytes already read (their start and the end before `offset`), so a record rewritten
    under the reader is noticed; `totals` and `model`, a host's running totals and the model in
    force at `offset` (Codex records totals, not each call; for Claude Code, what each of
    the last messages was charged), and its plan; `tampered`: why this look found the
    record rewritten or cut short ("" when it did not). The spend already counted is never
    taken back."""

    offset: int
    seen: tuple[str, ...]
    usd: float = 0.0
    tokens: int = 0
    unknown: tuple[str, ...] = ()
    head: str = ""
    totals: tuple[int, ...] = ()
    model: str = ""
    tampered: str = ""
    # The subscription plan the host's records name (Codex: a ChatGPT plan), "" for none:
    # the dollars are then list prices of the tokens, not a bill.
    plan: str = ""


class SpendReader(Protocol):
    """Reads the implementer's spend from the host's own records, incrementally."""

    def read(
        self, path: str, last: SpendRead, since: str, prices: Any = None, model: str = ""
    ) -> SpendRead:
        """The spend recorded in `path` after the last look (`last`: its offset, seen ids,
        digest, totals), by messages at or after `since` (an ISO-8601 UTC time); `prices` are
        the user's own rows, if any; `model`, the one the host's hook payload names (the
        implementer cannot write it, unlike the record): a record that names a cheaper one
        is priced at this one."""

    def related(self, path: str, after: float) -> list[str]:
        """The other records of the same session whose spend counts too (subagents, background
        tasks), each read with a cursor of its own; `after`: when the loop started (epoch
        seconds), before which no record holds its spend."""


class Host(Protocol):
    name: str
    # How the user knows it ("Claude Code"), for doctor and messages.
    label: str
    # Tools whose call changes files (reviewed in `edit` mode), run shell commands (rails,
    # `commit` mode), only read files (a host's settings may be read), or name files at all.
    edit_tools: frozenset[str]
    shell_tools: frozenset[str]
    read_tools: frozenset[str]
    file_tools: frozenset[str]
    # The environment variable that carries the session id into the implementer's commands.
    session_env: str | None
    # The tools by which the implementer asks the user a question; while a loop runs in the
    # owner's session, the manager answers them (`questions`).
    question_tools: frozenset[str]
    # The files this host reads to decide what to run (its MCP servers, hooks, settings, skills),
    # as patterns relative to the worktree (`**`: any folders, none included). They are the
    # user's: the wall keeps them unwritable, the rails deny writing them, and the loop compares
    # them with what it started with (`runfiles.py`). Git's own are not a host's.
    run_files: tuple[str, ...]
    # The variable that moves its config folder (settings, login, records), or None: the rails
    # expand it in a command, so `$VAR/...` names the file it is.
    config_env: str | None
    # Its CLI: the names it is installed under (a regular expression over a program's name) and
    # the packages that ship it. Started from the implementer's shell, it would be an agent no
    # loop supervises (rails `host-cli`).
    cli_names: str
    cli_packages: tuple[str, ...]

    def logins(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Where this host keeps its own login for `env` (its variables may move it): the wall
        hides it from every implementer, whichever host runs."""

    def event(self, data: Mapping[str, Any], event: str) -> HookInput:
        """This host's hook payload as the one host-neutral event."""

    def shell_command(self, tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
        """The shell line a tool call runs, or None when the tool runs no shell."""

    def touched_paths(self, tool_name: str, tool_input: Mapping[str, Any]) -> list[str]:
        """The file paths a tool call names, as given (relative or absolute)."""

    def is_settings_file(self, path: str) -> bool:
        """Does this path hold the host's hooks (or the switch that turns them off)?"""

    def is_spend_record(self, path: str) -> bool:
        """Does this path hold the host's own record of what the implementer spends (or the
        folder that holds such records), which the loop's budget reads?"""

    def render(self, event: str, answer: Answer) -> str:
        """The answer as this host's hook stdout: JSON, or "" for a silent allow."""

    def command(self, verb: str) -> str:
        """How a user of this host runs one of our commands, for messages."""

    def headless(self) -> Headless | None:
        """The runner for rounds, or None when this host cannot run without a terminal."""

    def installer(self) -> Installer | None:
        """Its install/uninstall, or None when the host installs us itself."""

    def doctor(self, env: Mapping[str, str], repo: Path | None) -> HostReport:
        """Is the loop installed where this host will run it?"""

    def boundary(self) -> Boundary | None:
        """The sandbox the host keeps the implementer in; None for a host without one."""

    def spend_reader(self) -> SpendReader | None:
        """The reader of the implementer's spend, or None when this host records none we read."""


@dataclass(frozen=True)
class HostSet:
    """Every registered host as one, for what must hold whichever host asks: the files any of
    them runs programs from, their logins, their settings files and spend records. The
    entrance hands it down from the registry (`hosts.roster`)."""

    members: tuple[Host, ...]

    def run_files(self) -> tuple[str, ...]:
        """The patterns of every file git or one of these hosts runs programs from (git's own
        and each host's `run_files`), relative to a worktree."""
        return tuple(
            dict.fromkeys([*GIT_RUN_FILES, *(p for h in self.members for p in h.run_files)])
        )

    def logins(self, home: Path, env: Mapping[str, str]) -> list[Path]:
        """Each host's login, both where it is by default and where `env` moves it."""
        found = [p for h in self.members for p in (*h.logins({}, home), *h.logins(env, home))]
        return list(dict.fromkeys(found))

    def credential_stores(self, home: Path, env: Mapping[str, str]) -> list[Path]:
        """Every credential store the wall hides under `home`: the standard ones (`.ssh`,
        `.aws`, `.git-credentials`, ...) and each host's login. No I/O: the supervisor's own
        sandbox reads this list too."""
        standard = (home / rel for rel in CREDENTIALS_IN_HOME)
        return list(dict.fromkeys([*standard, *self.logins(home, env)]))

    def config_envs(self) -> tuple[str, ...]:
        return tuple(h.config_env for h in self.members if h.config_env)

    @cached_property
    def cli(self) -> re.Pattern[str]:
        """A program name that is some host's CLI (a version after `@`, `.exe` on Windows)."""
        return re.compile(rf"({self._cli_names})(\.exe)?(@[^/]*)?")

    @cached_property
    def cli_named(self) -> re.Pattern[str]:
        """A host's CLI named in a word (`$(which NAME)`): its program is not known, its name is."""
        return re.compile(rf"\b({self._cli_names})\b")

    @property
    def _cli_names(self) -> str:
        return "|".join(f"(?:{h.cli_names})" for h in self.members)

    def cli_packages(self) -> tuple[str, ...]:
        return tuple(p for h in self.members for p in h.cli_packages)

    def is_settings_file(self, path: str) -> bool:
        """Does `path` hold some host's hooks (or the switch that turns them off)?"""
        return any(h.is_settings_file(path) for h in self.members)

    def is_spend_record(self, path: str) -> bool:
        """Does `path` hold some host's record of the implementer's spend?"""
        return any(h.is_spend_record(path) for h in self.members)

    def wall_spec(
        self, worktree: Path, state_home: Path, home: Path, env: Mapping[str, str]
    ) -> WallSpec:
        """The bare wall for a worktree, with every host's run files and logins."""
        return WallSpec(
            worktree=worktree,
            state_home=state_home,
            home=home,
            logins=tuple(self.logins(home, env)),
            run_files=self.run_files(),
        )
