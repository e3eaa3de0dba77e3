"""The end of every loop's final message: what it spent and how to see what it did.

Imported by the hooks' ending paths, so it needs nothing but the spend and the output.
"""

from __future__ import annotations

from .output import terminal_command
from .spend import Spend


def closing(message: str, spent: Spend) -> str:
    """`message` as a sentence, then the spend (both meters and their total) and the report
    command."""
    message = message.rstrip()
    if message and not message.endswith((".", "!", "?")):
        message += "."
    return f"{message} Spent: {spent.text()}; see what it did: {terminal_command('report')}."
