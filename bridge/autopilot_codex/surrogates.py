"""JSON from outside, decoded at the doors where it comes in: hook input, manager answers, and
the files the implementer can write or damage (the state, its witness, the config, the host's
records).

JSON may spell half a surrogate pair (`"\\ud800"`) and `json.loads` keeps it as a lone
surrogate, a `str` no UTF-8 encoder takes: the first write of the state, the ledger or a
prompt would then fail. Text from the host and the manager is scrubbed once, as it arrives,
so nothing further in has to be careful. `loads` does the same for a file, and makes every
way its text cannot be read one `ValueError`. Standard library only (the hook's cold path).
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")
# Only a `\u` escape in the range d800-dfff can put one there: strict UTF-8 refuses the rest.
_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

REPLACEMENT = "\ufffd"
# The digits of the largest float (1.8e308: 309): an int read from as many or more may fail the
# first `float()` it meets. Text with fewer digits in all holds no such int (a cheap look: a
# regular expression for the run is ten times slower than the decoding).
_FLOAT_DIGITS = 309
_DIGITS = b"0123456789"


def loads(text: str | bytes) -> Any:
    """JSON text from outside, decoded; ValueError for text that is not JSON or not UTF-8,
    that nests past the recursion limit, or that holds an integer no float can hold (or past
    `int`'s digit limit). Lone surrogates come back as U+FFFD (`scrub`)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    try:
        few = len(raw) - len(raw.translate(None, _DIGITS)) < _FLOAT_DIGITS
        data = json.loads(text, parse_int=None if few else _bounded)
    except RecursionError as exc:
        raise ValueError("JSON nested too deep") from exc
    return scrub(data) if possible(raw) else data


def _bounded(digits: str) -> int:
    value = int(digits)
    if len(digits) < _FLOAT_DIGITS:
        return value
    try:
        float(value)
    except OverflowError:
        raise ValueError("a number too large for a float") from None
    return value


def possible(raw: bytes | str) -> bool:
    """Whether JSON text `raw` may decode to a lone surrogate (a cheap look before a walk)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    return _ESCAPE.search(data) is not None


def scrub(value: Any) -> Any:
    """`value` (decoded JSON) with every lone surrogate, in keys and strings, replaced by
    U+FFFD, in fresh containers. The walk is iterative: any depth `json.loads` accepted is
    walked without recursion."""
    if isinstance(value, str):
        return _LONE.sub(REPLACEMENT, value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    # (container, key or index) slots still to visit; a container is replaced in its parent.
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, slot = stack.pop()
        item = parent[slot]
        if isinstance(item, str):
            parent[slot] = _LONE.sub(REPLACEMENT, item)
        elif isinstance(item, list):
            fresh = list(item)
            parent[slot] = fresh
            stack.extend((fresh, i) for i in range(len(fresh)))
        elif isinstance(item, dict):
            fresh_map = {_LONE.sub(REPLACEMENT, str(k)): v for k, v in item.items()}
            parent[slot] = fresh_map
            stack.extend((fresh_map, k) for k in fresh_map)
    return root[0]
