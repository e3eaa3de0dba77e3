"""A small Markdown subset to HTML: headings, lists, paragraphs and four inline forms."""

from __future__ import annotations

import html
import re

BLANK = re.compile(r"\n\s*\n")
HEADING = re.compile(r"(#{1,3}) (.*)")
CODE = re.compile(r"`([^`]*)`")
STRONG = re.compile(r"\*\*(.+?)\*\*")
EM = re.compile(r"\*(.+?)\*")
LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")


def _format(text: str) -> str:
    text = STRONG.sub(r"<strong>\1</strong>", text)
    text = EM.sub(r"<em>\1</em>", text)
    return LINK.sub(r'<a href="\2">\1</a>', text)


def inline(text: str) -> str:
    escaped = html.escape(text, quote=False)
    # Split around code spans: odd pieces are code, left as they are.
    pieces = CODE.split(escaped)
    return "".join(
        f"<code>{piece}</code>" if index % 2 else _format(piece)
        for index, piece in enumerate(pieces)
    )


def _block(block: str) -> str:
    lines = block.splitlines()
    heading = HEADING.fullmatch(block)
    if heading and len(lines) == 1:
        level = len(heading.group(1))
        return f"<h{level}>{inline(heading.group(2))}</h{level}>"
    if all(line.startswith("- ") for line in lines):
        return "<ul>" + "".join(f"<li>{inline(line[2:])}</li>" for line in lines) + "</ul>"
    return f"<p>{inline(' '.join(line.strip() for line in lines))}</p>"


def render(text: str) -> str:
    blocks = [block.strip() for block in BLANK.split(text.strip()) if block.strip()]
    return "\n".join(_block(block) for block in blocks)
