"""Settings: command flags, then environment, then `<home>/config.json`, then defaults.

Every value is checked on its own. A command refuses a bad one with a line naming it and the
accepted range; a hook (which must not break the session) ignores only that value, falls back
to the next source for that one setting, and says which it ignored.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import defaults, regular, surrogates
from .defaults import REVIEW_MODES
from .errors import BridgeError
from .paths import state_home

if TYPE_CHECKING:
    from .checks.records import CheckSpec
    from .state import State

APIS = ("responses", "chat")


@dataclass(frozen=True)
class Config:
    model: str = defaults.MODEL
    manager: str = ""
    api: str = "responses"
    # The OpenAI-compatible server; "" is the SDK's default (api.openai.com).
    base_url: str = ""
    review: str = defaults.REVIEW_MODE
    budget_usd: float = defaults.BUDGET_USD
    max_iterations: int = defaults.MAX_ITERATIONS
    # Caps besides the budget, 0 = none: the implementer's tokens, and wall seconds since the
    # loop started (given as `2h`, `90m`, `1h30m` or seconds).
    max_tokens: int = 0
    max_duration: float = 0.0
    # The user's own prices of the implementer's models, by model prefix, in dollars per
    # million tokens (`prices.parse_own`); they come before the built-in table.
    implementer_prices: dict[str, Any] = field(default_factory=dict)
    # Seconds one manager call may take in total, retries included; the hook timeout is larger.
    timeout_s: float = 180.0
    # Upper bound on the characters of any prompt sent to the manager.
    prompt_chars: int = 60_000
    max_output_tokens: int = 4_000
    # The plan is the one long answer; it gets its own output cap.
    plan_output_tokens: int = 8_000
    # `ask` consultations the implementer may make per task; each is a paid manager call.
    max_consultations_per_task: int = 3
    stall_limit: int = defaults.STALL_LIMIT
    no_progress_limit: int = defaults.NO_PROGRESS_LIMIT
    # The review convergence rules (`styles/autopilot/convergence`): verbatim deliveries of a
    # finding before it is disputed, findings per task, reviews in a row that change nothing.
    review_max_verbatim: int = 2
    review_max_findings: int = 12
    review_not_converging: int = 3
    lock_timeout_s: float = 10.0
    rails_allow: tuple[str, ...] = field(default_factory=tuple)
    rails_deny: tuple[str, ...] = field(default_factory=tuple)
    allow_push: bool = False
    # The user's own check commands (see `checks`): strings or {command, timeout_s} objects.
    checks: tuple[str | dict[str, Any], ...] = field(default_factory=tuple)
    # Names of environment variables the checks get on top of the scrubbed few (`cleanenv`).
    checks_env: tuple[str, ...] = field(default_factory=tuple)
    # The checks' network and daemons' sockets (a local database): off unless the user says so.
    checks_network: bool = False
    # The wall: the only hosts the implementer's network may reach (a push needs its remote's
    # host here), and more paths its tools may not read, on top of the state home and the
    # credential files the boundary always hides.
    wall_allow_hosts: tuple[str, ...] = field(default_factory=tuple)
    wall_deny_read: tuple[str, ...] = field(default_factory=tuple)
    # A program and its arguments told when a loop ends, pauses for the user, loses its
    # session or falls silent (`notify`): run without a shell, the message as its last
    # argument, the event as JSON on stdin. Never from the environment.
    notify_command: tuple[str, ...] = field(default_factory=tuple)


# Each setting's environment variable: `AUTOPILOT_CODEX_` and its name, but for two.
ENV = {
    "base_url": "OPENAI_BASE_URL",
    "max_consultations_per_task": "AUTOPILOT_CODEX_MAX_CONSULTATIONS",
} | {
    name: f"AUTOPILOT_CODEX_{name.upper()}"
    for name in (
        *("model", "manager", "api", "review", "budget_usd", "max_iterations", "max_tokens"),
        *("max_duration", "timeout_s", "prompt_chars", "stall_limit", "no_progress_limit"),
        *("review_max_verbatim", "review_max_findings", "review_not_converging"),
        *("max_output_tokens", "plan_output_tokens", "lock_timeout_s", "allow_push"),
    )
}

# The command-line flag of a setting, for messages about a bad flag value.
FLAGS = {
    "budget_usd": "--budget",
    "max_iterations": "--max-iterations",
    "max_tokens": "--max-tokens",
    "max_duration": "--max-duration",
    "model": "--model",
    "review": "--review",
    "checks": "--check",
}

# name -> (low, high, low exclusive). Every number must also be finite.
RANGES: dict[str, tuple[float, float, bool]] = {
    "budget_usd": (0, 10_000, True),
    "max_iterations": (1, 10_000, False),
    "max_tokens": (0, 10**11, False),
    # The hooks' own timeout is 600 s: a manager call must end well before the host kills it.
    "timeout_s": (0, 540, True),
    "prompt_chars": (2_000, 2_000_000, False),
    "max_output_tokens": (256, 200_000, False),
    "plan_output_tokens": (256, 200_000, False),
    "max_consultations_per_task": (0, 100, False),
    # Claude Code overrides a Stop hook after 8 consecutive blocks; we must yield first.
    "stall_limit": (1, 7, False),
    "no_progress_limit": (1, 1_000, False),
    "review_max_verbatim": (1, 100, False),
    "review_max_findings": (1, 10_000, False),
    "review_not_converging": (1, 1_000, False),
    "lock_timeout_s": (0, 600, True),
}
# The manager backends, each the module `manager/<name>_backend.py` that `manager.select`
# loads: the one list, so the settings check a name without importing the manager.
MANAGERS = ("openai", "codex")
# "" for `manager` lets `manager.select` choose: openai with an API key, else the codex CLI.
CHOICES = {"review": REVIEW_MODES, "api": APIS, "manager": ("", *MANAGERS)}
# What a loop is planned with and its hooks need again; kept in its style's record (never the key).
LOOP_KEPT = ("api", "base_url", "timeout_s", "max_output_tokens")


def accepted(name: str) -> str:
    """The accepted values of a setting, as the README and the messages say them."""
    if name in RANGES:
        low, high, open_low = RANGES[name]
        return f"a number {'above' if open_low else 'from'} {low:.0f} up to {high:.0f}"
    fixed = CHOICES.get(name)
    if fixed is not None:
        return "one of " + ", ".join(c for c in fixed if c)
    if name == "checks":
        return "a list of commands or of {command, timeout_s} objects"
    return "any text"


def config_file(home: Path | None = None) -> Path:
    return (home or state_home()) / "config.json"


# The last settings read without overrides, by what they were read from (the file's bytes,
# the environment's settings): a Stop that ends a loop read them twice, at its start and for
# the notice (`notify`), and the second reading changed nothing.
_LAST: tuple[tuple[object, ...], Config, tuple[str, ...]] | None = None


def load_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    warnings: list[str] | None = None,
) -> Config:
    """Strict when `warnings` is None (a command: refuse a bad value); otherwise each bad
    value is skipped for the next source of that setting and described in `warnings`."""
    global _LAST  # noqa: PLW0603 - one reading remembered per process
    env = os.environ if environ is None else environ
    sources: list[dict[str, tuple[str, Any]]] = []  # highest priority first
    sources.append(
        {k: (f"{FLAGS.get(k, k)} {v}", v) for k, v in (overrides or {}).items() if v is not None}
    )
    sources.append(
        {
            k: (f"{var}={env[var].strip()}", env[var])
            for k, var in ENV.items()
            if env.get(var, "").strip()
        }
    )
    path = config_file(home)
    raw = _raw(path)
    key = (str(path), raw, tuple(sorted(sources[1].items())))
    last = _LAST
    if not sources[0] and last is not None and last[0] == key:
        if warnings is not None:
            warnings.extend(last[2])
            return last[1]
        if not last[2]:
            return last[1]  # read without a warning: the strict reading is the same
    said: list[str] | None = None if warnings is None else []
    sources.append({k: (f"{k}={v!r} in {path}", v) for k, v in _read_file(path, raw, said).items()})
    config = _build(sources, said)
    if warnings is not None and said is not None:
        warnings.extend(said)
    if not sources[0] and not isinstance(raw, OSError):
        _LAST = (key, config, tuple(said or ()))
    return config


def load_with_warnings() -> tuple[Config, str]:
    """A hook's settings: a broken one must not switch the rails off, so only it falls back
    (to the next source of that one setting), and the second value says which, for the user."""
    warnings: list[str] = []
    config = load_config(warnings=warnings)
    return config, "".join(f"autopilot-codex: {w}\n" for w in warnings).rstrip("\n")


def _raw(path: Path) -> bytes | OSError | None:
    """The file's bytes, None when there is none, or why it cannot be read."""
    try:
        return regular.read(path)  # a fifo or a device there is waited on by no reader
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc


def _read_file(
    path: Path, raw: bytes | OSError | None, warnings: list[str] | None
) -> dict[str, Any]:
    try:
        return _parse_file(path, raw)
    except BridgeError as exc:
        if warnings is None:
            raise
        warnings.append(f"{exc}; its settings are ignored")
        return {}


def _parse_file(path: Path, raw: bytes | OSError | None) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, OSError):
        raise BridgeError(f"cannot read {path}: {raw.strerror}") from raw
    try:
        # As `read_text` reads it: UTF-8, universal newlines.
        data = surrogates.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
    except json.JSONDecodeError as exc:
        raise BridgeError(
            f"{path} is not valid JSON (line {exc.lineno}): fix or remove it"
        ) from exc
    except ValueError as exc:  # not UTF-8, nested too deep, a number too large
        raise BridgeError(f"{path} is not valid JSON ({exc}): fix or remove it") from exc
    if not isinstance(data, dict):
        raise BridgeError(f"{path} must hold a JSON object")
    return data


def _build(sources: list[dict[str, tuple[str, Any]]], warnings: list[str] | None) -> Config:
    known = {f.name for f in fields(Config)}
    typed: dict[str, Any] = {}
    ignored: list[tuple[str, str]] = []
    for source in sources:
        for name, (said, raw) in source.items():
            if name in typed:
                continue
            try:
                if name not in known:
                    raise BridgeError(f"unknown setting {said}")
                typed[name] = check(name, raw, said)
            except BridgeError as exc:
                if warnings is None:
                    raise
                ignored.append((name, str(exc)))
    config = Config(**typed)
    for name, text in ignored:
        used = f"; using {name}={getattr(config, name)!r}" if name in known else ""
        assert warnings is not None  # strict mode raised at the first bad value
        warnings.append(f"{text}; ignored{used}")
    return config


def check(name: str, raw: Any, said: str | None = None) -> Any:
    """One setting's value, typed and in range, or a BridgeError naming it and the range."""
    said = said or f"{name}={raw!r}"
    if name == "checks":
        return _checks(raw, said)
    if name in ("max_duration", "implementer_prices"):
        return _special(name, raw, said)
    kind = str(next(f.type for f in fields(Config) if f.name == name))
    try:
        value = _coerce(kind, raw)
    except (TypeError, ValueError, OverflowError) as exc:
        raise BridgeError(f"{said} is not accepted: {name} must be {accepted(name)}") from exc
    if isinstance(value, float) and not math.isfinite(value):
        raise BridgeError(f"{said} is not accepted: {name} must be {accepted(name)}")
    if name in RANGES:
        low, high, open_low = RANGES[name]
        if value > high or value < low or (open_low and value == low):
            raise BridgeError(f"{said} is not accepted: {name} must be {accepted(name)}")
    fixed = CHOICES.get(name)
    if fixed is not None and value not in fixed:
        raise BridgeError(f"{said} is not accepted: {name} must be {accepted(name)}")
    return value


def flag(name: str, raw: Any, option: str = "") -> Any:
    """A command-line option's value checked as the setting it sets; None when not given."""
    return None if raw is None else check(name, raw, f"{option or FLAGS[name]} {raw}")


def _special(name: str, raw: Any, said: str) -> Any:
    """A duration (`2h`) as seconds, or the user's price rows, checked."""
    from .meters import parse_duration
    from .prices import parse_own

    try:
        if name == "max_duration":
            return 0.0 if raw in (0, "0", "") else parse_duration(str(raw))
        return parse_own(raw)
    except ValueError as exc:
        raise BridgeError(f"{said} is not accepted: {exc}") from exc


def _checks(raw: Any, said: str) -> tuple[str | dict[str, Any], ...]:
    """The `checks` setting as given, once `checks.specs_from_config` accepts every entry."""
    from .checks.specs import specs_from_config

    items = list(raw) if isinstance(raw, list | tuple) else raw
    try:
        specs_from_config(items)
    except BridgeError as exc:
        raise BridgeError(f"{said} is not accepted: {exc}") from exc
    return tuple(items or ())  # null, which `specs_from_config` reads as none


def check_specs(config: Config) -> list[CheckSpec]:
    """The checks a loop started with these settings runs, as specs."""
    from .checks.specs import specs_from_config

    return specs_from_config(list(config.checks))


def _coerce(kind: str, raw: Any) -> Any:
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        return str(raw).strip().lower() in ("1", "true", "yes", "on")
    if kind in ("int", "float"):
        if isinstance(raw, bool):
            raise TypeError("a bool is not a number")
        number = float(str(raw).strip()) if isinstance(raw, str) else float(raw)
        if kind == "int":
            if not math.isfinite(number) or number != int(number):
                raise ValueError("not a whole number")
            return int(number)
        return number
    if kind.startswith("tuple"):
        if isinstance(raw, str):
            return tuple(p.strip() for p in raw.split("\n") if p.strip())
        return tuple(str(p) for p in raw)
    return str(raw).strip()


def for_loop(
    state: State, environ: Mapping[str, str] | None = None, base: Config | None = None
) -> Config:
    """The settings a hook uses for a loop: what the loop was planned with, except where the
    hook's own environment explicitly sets a value (Claude Code may not see the shell's)."""
    env = os.environ if environ is None else environ
    config = base if base is not None else load_config(environ=env, warnings=[])
    kept: dict[str, Any] = {}
    for name in LOOP_KEPT:
        stored = getattr(state.own, name, None)
        if stored in (None, "", 0) or env.get(ENV[name], "").strip():
            continue
        kept[name] = stored
    return replace(config, **kept) if kept else config
