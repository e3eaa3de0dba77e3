"""Settings: command flags, then environment, then `<home>/config.json`, then defaults."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from . import defaults
from .defaults import REVIEW_MODES
from .errors import BridgeError
from .paths import state_home

APIS = ("responses", "chat")
# "" lets `manager.select` choose: openai with an API key, else the codex CLI.
MANAGERS = ("", "openai", "codex")


@dataclass(frozen=True)
class Config:
    model: str = "gpt-6.2-sol"
    manager: str = ""
    api: str = "responses"
    review: str = defaults.REVIEW_MODE
    budget_usd: float = defaults.BUDGET_USD
    max_iterations: int = defaults.MAX_ITERATIONS
    # Seconds one manager call may take in total, retries included; the hook timeout is larger.
    timeout_s: float = 180.0
    # Upper bound on the characters of any prompt sent to the manager.
    prompt_chars: int = 60_000
    max_output_tokens: int = 4_000
    stall_limit: int = defaults.STALL_LIMIT
    no_progress_limit: int = defaults.NO_PROGRESS_LIMIT
    lock_timeout_s: float = 10.0
    rails_allow: tuple[str, ...] = field(default_factory=tuple)
    rails_deny: tuple[str, ...] = field(default_factory=tuple)
    allow_push: bool = False


ENV = {
    "model": "AUTOPILOT_CODEX_MODEL",
    "manager": "AUTOPILOT_CODEX_MANAGER",
    "api": "AUTOPILOT_CODEX_API",
    "review": "AUTOPILOT_CODEX_REVIEW",
    "budget_usd": "AUTOPILOT_CODEX_BUDGET_USD",
    "max_iterations": "AUTOPILOT_CODEX_MAX_ITERATIONS",
    "timeout_s": "AUTOPILOT_CODEX_TIMEOUT_S",
    "prompt_chars": "AUTOPILOT_CODEX_PROMPT_CHARS",
    "stall_limit": "AUTOPILOT_CODEX_STALL_LIMIT",
    "no_progress_limit": "AUTOPILOT_CODEX_NO_PROGRESS_LIMIT",
    "max_output_tokens": "AUTOPILOT_CODEX_MAX_OUTPUT_TOKENS",
    "lock_timeout_s": "AUTOPILOT_CODEX_LOCK_TIMEOUT_S",
    "allow_push": "AUTOPILOT_CODEX_ALLOW_PUSH",
}


def config_file(home: Path | None = None) -> Path:
    return (home or state_home()) / "config.json"


def load_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Config:
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    values.update(_read_file(config_file(home)))
    for name, var in ENV.items():
        raw = env.get(var, "").strip()
        if raw:
            values[name] = raw
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return _build(values)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BridgeError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BridgeError(
            f"{path} is not valid JSON (line {exc.lineno}): fix or remove it"
        ) from exc
    if not isinstance(data, dict):
        raise BridgeError(f"{path} must hold a JSON object")
    return data


def _build(values: dict[str, Any]) -> Config:
    known = {f.name: f for f in fields(Config)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise BridgeError(f"unknown setting(s): {', '.join(unknown)}")
    typed: dict[str, Any] = {}
    for name, raw in values.items():
        typed[name] = _coerce(name, known[name].type, raw)
    config = Config(**typed)
    _validate(config)
    return config


def _coerce(name: str, kind: Any, raw: Any) -> Any:
    kind = str(kind)
    try:
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            return str(raw).strip().lower() in ("1", "true", "yes", "on")
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind.startswith("tuple"):
            if isinstance(raw, str):
                return tuple(p.strip() for p in raw.split("\n") if p.strip())
            return tuple(str(p) for p in raw)
        return str(raw).strip()
    except (TypeError, ValueError) as exc:
        raise BridgeError(f"setting {name}={raw!r} is not a valid {kind}") from exc


def _validate(config: Config) -> None:
    if config.review not in REVIEW_MODES:
        raise BridgeError(f"AUTOPILOT_CODEX_REVIEW must be one of {', '.join(REVIEW_MODES)}")
    if config.manager not in MANAGERS:
        raise BridgeError(f"AUTOPILOT_CODEX_MANAGER must be one of {', '.join(m for m in MANAGERS if m)}")
    if config.api not in APIS:
        raise BridgeError(f"AUTOPILOT_CODEX_API must be one of {', '.join(APIS)}")
    if config.budget_usd <= 0:
        raise BridgeError("the budget must be a positive amount of USD")
    if config.max_iterations < 1:
        raise BridgeError("max_iterations must be at least 1")
    if not 1 <= config.stall_limit <= 7:
        # Claude Code overrides a Stop hook after 8 consecutive blocks; we must yield first.
        raise BridgeError("stall_limit must be between 1 and 7")
    if not 0 < config.timeout_s <= 540:
        # The hooks' own timeout is 600 s: a manager call must end well before the host kills it.
        raise BridgeError("timeout_s must be between 0 and 540 seconds")
    if (
        config.prompt_chars < 2_000
        or config.max_output_tokens < 256
        or config.no_progress_limit < 1
    ):
        raise BridgeError("prompt_chars >= 2000, max_output_tokens >= 256, no_progress_limit >= 1")
