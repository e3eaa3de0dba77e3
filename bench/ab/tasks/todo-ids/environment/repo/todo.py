"""A todo list kept in one JSON file, with a tiny command line."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    items: list[dict[str, Any]] = json.loads(path.read_text())
    return items


def write(path: Path, items: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps(items, indent=2))


def main(argv: Sequence[str], path: Path) -> int:
    parser = argparse.ArgumentParser(prog="todo")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add")
    add.add_argument("text")
    args = parser.parse_args(argv)
    if args.command == "add":
        items = read(path)
        items.append({"text": args.text})
        write(path, items)
    return 0
