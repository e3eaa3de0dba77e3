"""A small Markdown subset to HTML."""

from __future__ import annotations


def render(text: str) -> str:
    blocks = [block.strip() for block in text.split("\n\n") if block.strip()]
    out = []
    for block in blocks:
        level = len(block) - len(block.lstrip("#"))
        if 1 <= level <= 3 and block[level:].startswith(" "):
            out.append(f"<h{level}>{block[level + 1:]}</h{level}>")
        else:
            out.append(f"<p>{block}</p>")
    return "\n".join(out)
