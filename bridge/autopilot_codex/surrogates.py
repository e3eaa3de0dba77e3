"""Lone UTF-16 surrogates out of decoded JSON, at the doors where outside JSON comes in.

JSON may spell half a surrogate pair (`"\\ud800"`) and `json.loads` keeps it as a lone
surrogate, a `str` no UTF-8 encoder takes: the first write of the state, the ledger or a
prompt would then fail. Text from the host and the manager is scrubbed once, as it arrives,
so nothing further in has to be careful. Standard library only (the hook's cold path).
"""

from __future__ import annotations

import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")
# Only a `\u` escape in the range d800-dfff can put one there: strict UTF-8 refuses the rest.
_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

REPLACEMENT = "\ufffd"


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
