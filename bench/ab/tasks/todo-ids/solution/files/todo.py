"""A todo list kept in one JSON file, with a tiny command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def read(path: Path) -> list[dict[str, Any]]:
    """The items, oldest first; items from before ids existed are numbered in file order."""
    if not path.exists():
        return []
    items: list[dict[str, Any]] = json.loads(path.read_text())
    for number, item in enumerate(items, start=1):
        item.setdefault("id", number)
        item.setdefault("done", False)
    return items


def write(path: Path, items: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps(items, indent=2))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("add").add_argument("text")
    commands.add_parser("done").add_argument("id", type=int)
    commands.add_parser("list").add_argument("--all", action="store_true")
    return parser


def main(argv: Sequence[str], path: Path) -> int:
    args = _parser().parse_args(argv)
    items = read(path)
    if args.command == "add":
        next_id = max((item["id"] for item in items), default=0) + 1
        items.append({"id": next_id, "text": args.text, "done": False})
        write(path, items)
    elif args.command == "done":
        found = [item for item in items if item["id"] == args.id]
        if not found:
            print(f"no item {args.id}", file=sys.stderr)
            return 2
        found[0]["done"] = True
        write(path, items)
    else:
        for item in sorted(items, key=lambda item: item["id"]):
            if not item["done"]:
                print(f"{item['id']}. {item['text']}")
            elif args.all:
                print(f"{item['id']}. [x] {item['text']}")
    return 0
