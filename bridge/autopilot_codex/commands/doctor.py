"""`autopilot-codex doctor`: is everything in place for a loop? Each line says what to fix.

"ok" passed, "FIX" is a fault with its remedy, "--" is a fact (neither): a host that is not
installed at all is only a fact, unless no host is ready.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import credentials, hosts
from ..config import Config, load_config
from ..errors import BridgeError
from ..host import BROKEN, NOTE, READY, HostReport
from ..output import terminal_command
from ..paths import find_worktree, state_home
from .doctor_jail import jail_line

OPENAI_KEY_HINT = (
    "Store it with `autopilot-codex login` (the bridge reads it there, the implementer cannot), "
    "or set it where the host starts (`export OPENAI_API_KEY=sk-...`, which the implementer "
    "can read), then restart Claude Code or Codex. For a local OpenAI-compatible server also set "
    "OPENAI_BASE_URL=http://127.0.0.1:11434/v1 and AUTOPILOT_CODEX_API=chat (any non-empty key "
    "works there). Or use your Codex login: install Codex and run `codex login`."
)


def git_check() -> Check:
    """The git binary the bridge runs: a trusted one, never the first `git` on PATH."""
    from ..gitbinary import MIN_VERSION, git_binary, git_version

    try:
        binary = git_binary()
    except BridgeError as exc:
        return Check(False, f"git: {exc}")
    version = git_version(binary)
    shown = ".".join(map(str, version)) or "unknown version"
    if version[:2] < MIN_VERSION:
        least = ".".join(map(str, MIN_VERSION))
        return Check(False, f"git: {binary} is {shown}; the bridge needs {least} or later")
    return Check(True, f"git: {binary} ({shown})")


@dataclass(frozen=True)
class Check:
    ok: bool
    text: str
    # A fact to know, neither a pass nor a fault: shown without "ok" beside it.
    note: bool = False


def run_checks(
    cwd: str, *, probe: bool = False, verbose: bool = False, wall_at: Path | None = None
) -> list[Check]:
    """`wall_at`: the folder whose wall is judged outside a repository (`install` there judges
    the wall it wrote for every repository); None: there is no repository to guard."""
    python = f"Python {sys.version.split()[0]} ({sys.executable})"
    checks = [Check(sys.version_info >= (3, 10), python), git_check()]
    try:
        config = load_config()
    except BridgeError as exc:
        checks.append(Check(False, f"settings: {exc}"))
    else:
        settings = f"manager model {config.model}, budget ${config.budget_usd:.2f}"
        checks.append(Check(True, f"settings: {settings}, review {config.review}"))
        checks.append(manager_check(config))
        if checks[-1].ok:
            checks.append(reach_check(config))
        if probe and checks[-1].ok:
            checks.append(probe_check(config))
    worktree = find_worktree(cwd)
    checks += host_checks(host_reports(Path(worktree) if worktree else None))
    checks += wall_checks(Path(worktree) if worktree else wall_at, verbose=verbose)
    checks.append(Check(True, *jail_line()))
    if worktree:
        checks.append(Check(True, f"git worktree: {worktree}"))
    else:
        checks.append(Check(True, f"{cwd} is not in a git repository (loops run inside one)", True))
    return [*checks, home_check()]


def home_check() -> Check:
    """Every loop keeps its state in the state home: one the bridge cannot write is a fault,
    found by writing there (modes alone say nothing for root, nor of a read-only mount)."""
    home = state_home()
    # Not created here (what exists decides what the wall hides): the folder it would be made
    # in is tried instead.
    where = home
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as exc:
        return Check(
            False,
            f"state home: cannot write to {where} ({exc.strerror or exc}); make it writable, or "
            "set AUTOPILOT_CODEX_HOME to a folder that is",
        )
    return Check(True, f"state home: {home}", True)


def manager_check(config: Config) -> Check:
    """Which backend answers, why that one, and what keeps it from answering."""
    from ..manager.select import backend_name, configured_problem

    name = backend_name(config)
    if config.manager:
        why = f"AUTOPILOT_CODEX_MANAGER={config.manager}"
    elif name == "codex":
        why = "no OPENAI_API_KEY, and codex is installed and logged in"
    elif credentials.load() is not None:
        why = f"the key stored by `autopilot-codex login` in {credentials.path()}"
    elif os.environ.get("OPENAI_API_KEY", "").strip():
        why = "OPENAI_API_KEY is set"
    else:
        why = "no OPENAI_API_KEY, and no logged-in codex to fall back on"
    problem = configured_problem(config)
    if problem is None:
        stored = credentials.load()
        base = config.base_url or (stored.base_url if stored else "")
        base = base if name == "openai" else ""
        where = f", server {base}" if base else ""
        return Check(True, f"manager: the {name} backend ({why}{where})")
    if name == "openai" and problem.startswith("OPENAI_API_KEY is not set"):
        problem = f"OPENAI_API_KEY is not set. {OPENAI_KEY_HINT}"
    return Check(False, f"{problem} (manager: the {name} backend, {why})")


def reach_check(config: Config) -> Check:
    """The manager answers, learned without a paid call (see doctor_reach)."""
    from ..manager.select import backend_name
    from .doctor_reach import reach_line

    return Check(*reach_line(backend_name(config), config))


def wall_checks(worktree: Path | None, *, verbose: bool = False) -> list[Check]:
    """The wall per host, and the key when the implementer can read it: facts, shown loudly,
    that a loop planned here would run unguarded (never a reason for "Not ready"). Two lines
    a host unless `verbose`: a whole list of missing pieces buries the one command that fixes
    them (a fresh machine's list ran to some 50 lines)."""
    from .doctor_wall import key_line, wall_lines

    checks = (
        [
            Check(True, text if verbose else _brief(text), note=not walled)
            for walled, text in wall_lines(worktree)
        ]
        if worktree
        else [Check(True, NO_REPOSITORY, note=True)]
    )
    key = key_line()
    return [*checks, Check(True, key, note=True)] if key else checks


NO_REPOSITORY = "wall: no git repository here, so nothing to guard; doctor in one says its wall"
WALL_PIECE = "       - "
WALL_FIX = "       fix: "


def _brief(text: str) -> str:
    """A host's wall lines as two: the level with how many pieces are missing and the first,
    and the first fix."""
    lines = text.splitlines()
    pieces = [line.removeprefix(WALL_PIECE) for line in lines if line.startswith(WALL_PIECE)]
    fixes = [line for line in lines if line.startswith(WALL_FIX)]
    if not pieces:
        return text  # walled: already one line
    head = lines[0].removesuffix("; missing:").removesuffix(":")
    more = f"; {len(pieces) - 1} more: `{terminal_command('doctor')} --verbose`"
    head += f"; missing: {pieces[0]}" + (more if len(pieces) > 1 else "")
    return "\n".join([head, *fixes[:1]])


def probe_check(config: Config) -> Check:
    """One tiny strict-schema request: does the server honour the schema, or only the shape?"""
    from ..manager.probe import probe

    result = probe(config)
    return Check(result.honoured, result.line)


def host_reports(repo: Path | None, env: Mapping[str, str] | None = None) -> list[HostReport]:
    environ = os.environ if env is None else env
    return [hosts.get(name).doctor(environ, repo) for name in hosts.HOSTS]


def host_checks(reports: list[HostReport]) -> list[Check]:
    """Each host's lines: a broken install is a fault; a host that is missing altogether is a
    fault only when no host is ready, otherwise a fact."""
    any_ready = any(r.state == READY for r in reports)
    checks: list[Check] = []
    for report in reports:
        for state, text in report.lines:
            fault = state == BROKEN or (state not in (READY, NOTE) and not any_ready)
            checks.append(Check(not fault, text, note=state != READY and not fault))
    return checks


def render(checks: list[Check]) -> str:
    lines = [f"{'--  ' if c.note else 'ok  ' if c.ok else 'FIX '} {c.text}" for c in checks]
    if all(c.ok for c in checks):
        where = "; ".join(
            f"{host.command('plan')} <goal> in {host.label}"
            for host in hosts.every()
            if host.command("plan") != terminal_command("plan")
        )
        lines.append(
            f"Ready. Inside a git repository: {where + '; ' if where else ''}"
            f"`{terminal_command('plan')} <goal>` in a terminal, or the codex-plan skill in Codex"
        )
    else:
        lines.append("Not ready: fix the lines marked FIX, then run this again.")
    return "\n".join(lines)
