"""The user's checks as specs, from flags and the config: a module of its own, without the
running, so that the config can check its `checks` setting without importing what runs them
(and, through them, git and the sandbox)."""

from __future__ import annotations

from ..errors import BridgeError
from .records import CheckSpec


def specs_from_config(value: object) -> list[CheckSpec]:
    """The `checks` config key: a list of command strings or of {command, timeout_s} objects."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BridgeError("config: `checks` must be a list of commands")
    specs = []
    for item in value:
        if isinstance(item, str):
            specs.append(spec(item))
        elif isinstance(item, dict) and set(item) <= {"command", "timeout_s"}:
            timeout = item.get("timeout_s")
            if timeout is not None and (
                isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
            ):
                raise BridgeError("config: a check's `timeout_s` must be a positive number")
            specs.append(spec(item.get("command"), None if timeout is None else float(timeout)))
        else:
            raise BridgeError("config: each entry of `checks` is a command or {command, timeout_s}")
    return specs


def spec(command: object, timeout_s: float | None = None) -> CheckSpec:
    """A spec from a `--check CMD` flag or a config entry; an empty command is refused."""
    if not isinstance(command, str) or not command.strip():
        raise BridgeError("a check must be a non-empty command")
    return CheckSpec(command.strip(), timeout_s)
