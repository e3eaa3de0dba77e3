"""Where a loop's files live and how they are written, one module per job (see `Store`)."""

from .load import Store

__all__ = ["Store"]
