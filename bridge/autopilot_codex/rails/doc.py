"""The rails' tables in the README and the `safety-rails` skill, rendered from the records.

    python -m autopilot_codex.rails.doc [--check] [--root DIR]

rewrites the text between the markers in both files (`--check`: only says which are stale, and
exits 1). Never imported by a hook.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .records import RULES

BEGIN = (
    "<!-- rails table: rendered from the rule records by `python -m autopilot_codex.rails.doc` -->"
)
END = "<!-- end of rails table -->"
SKILL = Path("skills/safety-rails/SKILL.md")
README = Path("README.md")


def skill_table() -> str:
    rows = [f"| `{r.id}` | {r.doc[0]} | {r.doc[1]} |".replace("|  |", "| |") for r in RULES]
    return "\n".join(["| rule id | denies | examples |", "|---|---|---|", *rows])


def readme_table() -> str:
    rows = [f"| `{r.id}` | {r.why} |" for r in RULES]
    return "\n".join(["| rule id | denies |", "|---|---|", *rows])


def rendered(text: str, table: str) -> str:
    """`text` with the table between its markers replaced; ValueError without the markers."""
    head, begin, rest = text.partition(BEGIN)
    _old, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError("the rails table markers are missing")
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


def stale(root: Path) -> list[Path]:
    """The files whose committed table differs from the records."""
    out = []
    for path, table in ((SKILL, skill_table()), (README, readme_table())):
        text = (root / path).read_text(encoding="utf-8")
        if rendered(text, table) != text:
            out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autopilot_codex.rails.doc")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[3])
    args = parser.parse_args(argv)
    old = stale(args.root)
    if args.check:
        for path in old:
            print(f"{path}: the rails table differs from the rule records", file=sys.stderr)
        return 1 if old else 0
    for path, table in ((SKILL, skill_table()), (README, readme_table())):
        file = args.root / path
        file.write_text(rendered(file.read_text(encoding="utf-8"), table), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
