"""Convert values between units of the same kind."""

from __future__ import annotations

METRES = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254}
METRES["ft"] = 12 * METRES["in"]
METRES["mi"] = 5280 * METRES["ft"]


def convert(value: float, source: str, target: str) -> float:
    if source not in METRES or target not in METRES:
        raise ValueError(f"cannot convert {source} to {target}")
    return value * METRES[source] / METRES[target]
