"""Parse the service's access and error logs, one line at a time."""

from __future__ import annotations


def parse_fields(line: str, names: list[str], kind: str) -> dict[str, str] | None:
    line = line.strip()
    if not line:
        return None
    parts = line.split(maxsplit=len(names) - 1)
    if len(parts) < len(names):
        raise ValueError(f"{kind} line needs {len(names)} fields: {line!r}")
    return dict(zip(names, parts, strict=True))


def parse_access(line: str) -> dict[str, str] | None:
    return parse_fields(line, ["time", "method", "path", "status"], "access")


def parse_error(line: str) -> dict[str, str] | None:
    fields = parse_fields(line, ["time", "level", "message"], "error")
    if fields is not None:
        fields["level"] = fields["level"].upper()
    return fields
