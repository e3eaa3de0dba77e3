"""`doctor --probe`: one tiny strict-schema request through the configured manager, to learn
whether the server honours the schema before a loop depends on it.

The prompt never describes the JSON it wants, so only a server that enforces the schema gets
a matching answer on the first try; a server that ignores it returns prose (a corrective retry
that then succeeds still means the schema is not enforced).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from ..config import Config
    from .select import ManagerFactory

PROBE_OUTPUT_TOKENS = 200
PROBE_TIMEOUT_S = 60.0
INSTRUCTIONS = "You are a health check. Be brief."
PROMPT = "Say hello in a few words."


class Probe(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    greeting: str
    word_count: int


@dataclass(frozen=True)
class ProbeResult:
    # The server answered with a schema-valid object on the first try.
    honoured: bool
    # The server answered at all (False: unreachable, auth, quota, HTTP error ...).
    answered: bool
    detail: str
    cost_usd: float = 0.0
    attempts: int = 0

    @property
    def line(self) -> str:
        mark = "ok" if self.honoured else "FAIL"
        return f"probe {mark}: {self.detail} (${self.cost_usd:.4f}, {self.attempts} request(s))"


def probe(config: Config, factory: ManagerFactory | None = None) -> ProbeResult:
    """Send the probe through `factory` (default: the configured backend) and judge it."""
    if factory is None:
        from .select import select

        factory = select(config)
    small = dataclasses.replace(
        config,
        max_output_tokens=min(config.max_output_tokens, PROBE_OUTPUT_TOKENS),
        timeout_s=min(config.timeout_s, PROBE_TIMEOUT_S),
    )
    outcome = factory(small.model, small).ask(Probe, INSTRUCTIONS, PROMPT)
    where = f"model {config.model}, api={config.api}"
    hint = "" if config.api == "chat" else "; for a local server try AUTOPILOT_CODEX_API=chat"
    if outcome.ok and outcome.corrections == 0:
        detail = f"the server honoured the strict schema ({where})"
        return ProbeResult(True, True, detail, outcome.cost_usd, outcome.attempts)
    if outcome.ok:
        detail = (
            f"the first answer did not match the schema, so the server does not enforce it "
            f"({where}){hint}"
        )
        return ProbeResult(False, True, detail, outcome.cost_usd, outcome.attempts)
    error = outcome.error or "no answer"
    if error.startswith("invalid answer"):
        detail = f"the server answered but ignored the schema ({where}): {error}{hint}"
        return ProbeResult(False, True, detail, outcome.cost_usd, outcome.attempts)
    detail = f"no answer ({where}): {error}"
    return ProbeResult(False, False, detail, outcome.cost_usd, outcome.attempts)
