"""A hook the gate let through: what the gate hands the engine (`hookrun`).

Its own module, importing only the defaults, so the engine need not import the gate (which
imports the engine) and the gate stays standard library only.
"""

from .defaults import STYLE


class Admitted:
    """A hook that reached a guarded loop: the raw payload and the worktree it belongs to."""

    __slots__ = ("raw", "repair", "style", "worktree")

    def __init__(
        self, raw: bytes, worktree: str, style: str = STYLE, repair: bool = False
    ) -> None:
        self.raw = raw
        self.worktree = worktree
        # From the active marker, so only that style's module is imported.
        self.style = style
        # One of the loop's two markers is missing or differs: the engine restores it.
        self.repair = repair
