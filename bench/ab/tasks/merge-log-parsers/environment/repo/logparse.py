"""Parse the service's access and error logs, one line at a time."""

from __future__ import annotations


def parse_access(line: str) -> dict[str, str] | None:
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    parts = line.split(" ", 3)
    if len(parts) < 4:
        raise ValueError(f"access line needs 4 fields: {line!r}")
    time, method, path, status = parts
    return {"time": time, "method": method, "path": path, "status": status}


def parse_error(line: str) -> dict[str, str] | None:
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    parts = line.split(" ", 2)
    if len(parts) < 3:
        raise ValueError(f"error line needs 3 fields: {line!r}")
    time, level, message = parts
    return {"time": time, "level": level.upper(), "message": message}
