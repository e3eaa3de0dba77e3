"""`codex exec --json`: a round's command line and its stream.

`item.started`/`item.completed` with `agent_message`, `command_execution`, `file_change`...;
`turn.completed` with `usage` (tokens, no dollars: the bridge prices them for the round's
model, `round_model`, with Codex's price table); `turn.failed`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...prices import count
from ...stream import action
from . import prices, round_model

if TYPE_CHECKING:
    from ...host import Argv, Estimate
    from ...prices import Price
    from ...stream import StreamState

# Codex reads its own config and login from CODEX_HOME; a custom model provider names the
# variable holding its key (`env_key`) in that config.
PREFIXES = ("CODEX_",)
_ENV_KEY = re.compile(r'^\s*env_key\s*=\s*["\']([A-Za-z_][A-Za-z0-9_]*)["\']', re.MULTILINE)
# Without the wall's profile: workspace-write keeps the repository's git directory read-only,
# and so it stays: the driver commits each round's changes (`commit`), so a round never needs
# to write `.git/config` or `.git/hooks`, which the driver's own git would then run. The
# network stays off. With the wall (`-c default_permissions=...`) this flag must go: a
# `--sandbox` on the command line would pick the sandbox instead of the profile.
DEFAULT_ARGS = ("--sandbox", "workspace-write")


class CodexHeadless:
    executable = "codex"

    def command(self, prompt: str, base: Argv, extra: Argv | None, wall: Argv = ()) -> list[str]:
        default = () if wall else DEFAULT_ARGS
        args = default if extra is None else extra
        return [*base, "exec", "--json", *args, *wall, prompt]

    def credentials(self, environ: Mapping[str, str]) -> tuple[set[str], tuple[str, ...]]:
        return key_names(environ), PREFIXES

    def model_of(self, cmd: Sequence[str], environ: Mapping[str, str]) -> str:
        return round_model.model_of(cmd, environ)

    def estimate(self, spend: Estimate, event: dict[str, Any], own: Mapping[str, Price]) -> None:
        """Nothing: `exec --json` tells no usage before `turn.completed`, which `read` prices
        itself (the budget watches it as a streamed figure when a round has several turns)."""

    def read(self, state: StreamState, event: dict[str, Any]) -> None:
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), dict) else {}
        assert isinstance(item, dict)
        itype = item.get("type")
        if kind in ("item.started", "item.completed"):
            if itype == "agent_message" and kind == "item.completed":
                state.last_message = str(item.get("text", ""))
            elif itype == "command_execution":
                state.last_action = action("shell", {"command": item.get("command", "")})
            elif itype == "file_change":
                paths = [
                    c.get("path", "") for c in item.get("changes") or [] if isinstance(c, dict)
                ]
                state.last_action = action("edit", {"file_path": ", ".join(paths)})
            elif itype in ("mcp_tool_call", "web_search"):
                state.last_action = action(str(itype), {"command": item.get("tool", "")})
        elif kind == "turn.completed":
            state.finished = True
            usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
            assert isinstance(usage, dict)
            input_, output = count(usage.get("input_tokens")), count(usage.get("output_tokens"))
            state.tokens = (state.tokens or 0) + input_ + output
            price, known = prices.price_of(state.model, state.own_prices)
            if not known:
                state.unpriced = state.model or UNNAMED
            # One turn may be several requests: whether one passed the long-context threshold
            # is not told, so none is taken to have.
            spent = prices.usd(price, input_, count(usage.get("cached_input_tokens")), 0, output)
            state.cost_usd = (state.cost_usd or 0.0) + spent
        elif kind == "turn.failed":
            error = event.get("error")
            state.error = str(error.get("message") if isinstance(error, dict) else error)


# How `status` names the model of a round whose command line and config name none.
UNNAMED = "codex's default model"


def key_names(environ: Mapping[str, str]) -> set[str]:
    """The variables Codex's model providers take their keys from (`env_key` in its config)."""
    configured = environ.get("CODEX_HOME", "").strip()
    home = Path(configured) if configured else Path(environ.get("HOME") or Path.home()) / ".codex"
    try:
        text = (home / "config.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return set(_ENV_KEY.findall(text))


HEADLESS = CodexHeadless()
