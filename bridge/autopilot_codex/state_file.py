"""How state.json is laid out and brought up to date: the common envelope and the style's own
record (schema 4), and one small named step per older schema. Plain dicts in, plain dicts out:
`state` turns them into records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import defaults, typedjson


def envelope(flat: dict[str, Any], style: str, own: object) -> dict[str, Any]:
    """A State dump as state.json lays it out: the envelope, then the style's record under the
    style's name."""
    return flat if own is None else {**flat, style: own}


def flatten(data: dict[str, Any], records: Iterable[str]) -> tuple[dict[str, Any], object]:
    """state.json's envelope without the style's record, and that record (None: none); raises
    typedjson.Invalid for a record of another style (`records`: the names that have one)."""
    style = data.get("style", defaults.STYLE)
    if not isinstance(style, str):
        raise typedjson.Invalid("style", "expected a string")
    for name in records:
        if data.get(name) is not None and name != style:
            raise typedjson.Invalid(name, f"a {name} record in a {style} loop")
    return {k: v for k, v in data.items() if k != style}, data.get(style)


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 names the loop's style and its owner policy; every v1 loop was an autopilot loop
    owned by one session."""
    return {**data, "schema_version": 2, "style": "autopilot", "owner": "session"}


# What v3 moved from a v2 file's flat record into its `autopilot` record.
V2_AUTOPILOT = (
    "model", "review_mode", "api", "base_url", "timeout_s", "max_output_tokens",
    "current_task", "task_base_sha", "completed_tasks", "no_progress_streak",
    "last_review", "last_verdict", "reviewed", "last_verdict_head", "last_review_head",
    "consultations", "consultations_task", "consultations_total", "pending_review",
)  # fmt: skip


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """v3 splits the one flat record into a common envelope and the style's own record. A v2
    ralph loop kept its session, iteration and cap twice, its own copy being the truth: the
    envelope takes that copy. The autopilot fields of a loop of another style were never read."""
    data = dict(data)
    style = data.get("style", defaults.STYLE)  # the State's default, as for a v2 file without it
    own = {k: data.pop(k) for k in V2_AUTOPILOT if k in data}
    if style == "autopilot":
        data["autopilot"] = own
    ralph = data.pop("ralph", None)
    if isinstance(ralph, dict):
        ralph = dict(ralph)
        for name in ("session_id", "iteration", "max_iterations"):
            if name in ralph:
                data[name] = ralph.pop(name)
        data["ralph"] = ralph
    elif ralph is not None:
        data["ralph"] = ralph  # not an object: parse_state refuses it, as before
    if style == "rounds":
        data["rounds"] = {"run_id": ""}
    data["schema_version"] = 3
    return data


def _v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    """v4 keeps no envelope value in a style's record: a ralph record's clock, stall count and
    caps move to the envelope, its "no budget" (null) becoming the envelope's 0."""
    data = {**data, "schema_version": 4}
    ralph = data.get("ralph")
    if data.get("style") == "ralph" and isinstance(ralph, dict):
        ralph = dict(ralph)
        data["budget_usd"] = ralph.pop("budget_usd", None) or 0.0
        seconds = ralph.pop("max_seconds", 0.0)
        data["max_seconds"] = data.get("max_seconds") or seconds
        for mine, theirs in (("started_at", "started_epoch"), ("idle_stop_blocks",) * 2):
            if mine in ralph:
                data[theirs] = ralph.pop(mine)
        data["ralph"] = ralph
    return data


# version -> the step that upgrades a file of that version by one.
MIGRATIONS = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Upgrade an older state.json step by step, one small named function per version."""
    version = data.get("schema_version")
    while isinstance(version, int) and version in MIGRATIONS:
        data = MIGRATIONS[version](data)
        version = data.get("schema_version")
    return data
