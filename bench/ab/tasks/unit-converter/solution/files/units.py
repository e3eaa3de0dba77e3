"""Convert values between units of the same kind."""

from __future__ import annotations

# Each linear kind: the size of every unit in the kind's base unit.
LENGTH = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254}
LENGTH["ft"] = 12 * LENGTH["in"]
LENGTH["mi"] = 5280 * LENGTH["ft"]
MASS = {"g": 1.0, "kg": 1000.0, "lb": 453.59237}
MASS["oz"] = MASS["lb"] / 16
VOLUME = {"ml": 0.001, "l": 1.0, "gal": 3.785411784}
LINEAR = (LENGTH, MASS, VOLUME)

# Temperature is affine: to and from kelvin.
TO_KELVIN = {"K": lambda v: v, "C": lambda v: v + 273.15, "F": lambda v: (v - 32) * 5 / 9 + 273.15}
FROM_KELVIN = {"K": lambda k: k, "C": lambda k: k - 273.15, "F": lambda k: (k - 273.15) * 9 / 5 + 32}


def _temperature(value: float, source: str, target: str) -> float:
    kelvin = TO_KELVIN[source](value)
    if kelvin < 0:
        raise ValueError(f"{value} {source} is below absolute zero")
    return value if source == target else FROM_KELVIN[target](kelvin)


def convert(value: float, source: str, target: str) -> float:
    if source in TO_KELVIN and target in TO_KELVIN:
        return _temperature(value, source, target)
    for kind in LINEAR:
        if source in kind and target in kind:
            return value if source == target else value * kind[source] / kind[target]
    raise ValueError(f"cannot convert {source} to {target}")
