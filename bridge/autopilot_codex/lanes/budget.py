"""The one budget of a lanes run, shared out as reservations (issue 37).

Every lane runs against a reservation set aside before it starts (its `--budget`,
`--max-tokens`, `--max-duration`); a lane starts only when its reservation fits what is neither
spent nor reserved, and a finished lane hands back what it did not spend. So whatever order the
lanes start and end in, the spent and the reserved together never pass the cap: each lane is
held to its own reservation by the rounds driver's caps.

Three meters: USD, tokens and seconds (lane seconds: each lane's time is set aside like its
money, so `--max-duration 1h` over three lanes gives each 20 minutes by default). A meter
without a cap is infinite and never refuses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

METERS = ("usd", "tokens", "seconds")


@dataclass(frozen=True)
class Amount:
    usd: float = 0.0
    tokens: float = 0.0
    seconds: float = 0.0

    def __add__(self, other: Amount) -> Amount:
        return Amount(*(a + b for a, b in zip(self.values(), other.values(), strict=True)))

    def values(self) -> tuple[float, float, float]:
        return (self.usd, self.tokens, self.seconds)

    def within(self, other: Amount) -> bool:
        """Every meter of this one at most the other's."""
        return all(a <= b for a, b in zip(self.values(), other.values(), strict=True))

    def less(self, other: Amount) -> Amount:
        """This one minus the other, never below zero (infinity stays infinite)."""
        return Amount(*(_minus(a, b) for a, b in zip(self.values(), other.values(), strict=True)))

    def least(self, other: Amount) -> Amount:
        return Amount(*(min(a, b) for a, b in zip(self.values(), other.values(), strict=True)))

    def share(self, parts: int) -> Amount:
        return Amount(*(v / max(1, parts) for v in self.values()))

    def record(self) -> dict[str, float | None]:
        """JSON-safe: an infinite meter (no cap) as null."""
        return {
            k: (None if math.isinf(v) else v) for k, v in zip(METERS, self.values(), strict=True)
        }

    @classmethod
    def read(cls, raw: dict[str, Any]) -> Amount:
        return cls(*(math.inf if raw.get(k) is None else float(raw[k]) for k in METERS))


def _minus(a: float, b: float) -> float:
    return a if math.isinf(a) else max(0.0, a - b)


def cap(usd: float | None, tokens: int, seconds: float) -> Amount:
    """The run's cap from its flags: no budget, 0 tokens or 0 seconds is no cap."""
    return Amount(
        math.inf if usd is None else usd,
        float(tokens) if tokens else math.inf,
        seconds if seconds else math.inf,
    )


@dataclass
class Budget:
    """The run's ledger: what was spent and what each running lane holds."""

    limit: Amount
    spent: Amount = Amount()
    reserved: dict[str, Amount] = field(default_factory=dict)
    # The worst case of the manager's call being made (`ask`), held until it is answered.
    asking: Amount = Amount()

    def free(self) -> Amount:
        held = sum(self.reserved.values(), self.asking)
        return self.limit.less(self.spent + held)

    def default_share(self, lanes: int, given_usd: float | None = None) -> Amount:
        """A lane's reservation: `--lane-budget` (USD) when given, else the free budget over the
        lanes not yet running; tokens and seconds always the free share."""
        share = self.free().share(lanes - len(self.reserved))
        return share if given_usd is None else Amount(given_usd, share.tokens, share.seconds)

    def reserve(self, key: str, amount: Amount) -> bool:
        """Set `amount` aside for `key` when it fits what is free; False (nothing held) if not.
        A reservation of nothing on a capped meter never fits: a lane needs something to run."""
        free = self.free()
        if key in self.reserved or not amount.within(free):
            return False
        if any(
            v <= 0 for v, f in zip(amount.values(), free.values(), strict=True) if not math.isinf(f)
        ):
            return False
        self.reserved[key] = amount
        return True

    def settle(self, key: str, used: Amount) -> None:
        """A lane ended having used `used`: its reservation goes back, its spend stays."""
        self.reserved.pop(key, None)
        self.spent = self.spent + used

    def charge(self, used: Amount) -> None:
        """Spend outside any lane (the manager's calls)."""
        self.spent = self.spent + used

    def ask(self, worst: Amount) -> bool:
        """Hold a manager call's worst case when it fits what is free; False (nothing held, the
        call is not to be made) if not."""
        if not worst.within(self.free()):
            return False
        self.asking = worst
        return True

    def answered(self) -> None:
        """The manager's call ended: its hold goes (what it cost is `charge`d)."""
        self.asking = Amount()

    def record(self) -> dict[str, Any]:
        return {
            "limit": self.limit.record(),
            "spent": self.spent.record(),
            "reserved": {k: v.record() for k, v in self.reserved.items()},
            "asking": self.asking.record(),
        }

    @classmethod
    def read(cls, raw: dict[str, Any]) -> Budget:
        return cls(
            Amount.read(raw["limit"]),
            Amount.read(raw["spent"]),
            {k: Amount.read(v) for k, v in raw["reserved"].items()},
            Amount.read(raw["asking"]),
        )
