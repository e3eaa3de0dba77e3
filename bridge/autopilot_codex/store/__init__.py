"""Where a loop's files live and how they are written, one module per job (see `Store`)."""

from .load import Held, Store, holding

__all__ = ["Held", "Store", "holding"]
