"""The line every loop's final message ends with: what it spent and how to see what it did.

Imported by the hooks' ending paths, so it needs nothing but the host names.
"""

from __future__ import annotations

from .hosts import terminal_command


def closing(spent_usd: float) -> str:
    return f" Spent ${spent_usd:.2f} in all; see what it did: {terminal_command('report')}."
