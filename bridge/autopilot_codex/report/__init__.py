"""`autopilot-codex report`: one self-contained HTML page of what a loop did.

Read from the loop's files through `loopfiles` (never the engine's readers, which quarantine),
gathered into plain records (`timeline`, `commits`), charted offline to inline SVG (`chart`)
and rendered by Jinja2 with autoescaping on (`render`). Jinja2 and pygal are imported only
here, so no hook ever loads them.
"""
