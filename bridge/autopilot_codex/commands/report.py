"""`autopilot-codex report`: write the loop's report page, and open it when asked."""

from __future__ import annotations

from pathlib import Path

from .. import loopfiles
from ..errors import BridgeError
from ..fileio import atomic_write
from ..paths import project_dir
from ..spend import of_files
from . import no_loop, worktree_of

REPORT = "report.html"


def report(*, cwd: str, out: str | None = None, open_it: bool = False) -> str:
    worktree = worktree_of(cwd)
    folder = project_dir(worktree)
    files = loopfiles.load(folder)
    from ..report.lanes import section

    # A repository whose lanes ran and no loop of its own still has a page: the lanes.
    loop = files.state or files.plan or files.rollout or files.events or files.result
    from .fleet import fleet_lines

    fleet = fleet_lines()
    if not (loop or section(worktree)):
        if fleet:  # no loop here, but a fleet's runs: those are the report
            return "\n".join(fleet)
        raise BridgeError(no_loop().removeprefix("autopilot-codex: "))
    from ..report.render import render

    page = render(files, worktree)
    # By default beside the loop's state, never in the worktree: a report is not the project's.
    target = Path(out).expanduser() if out else folder / REPORT
    if not target.is_absolute():
        target = Path(cwd) / target
    try:
        atomic_write(target, page)
    except OSError as exc:  # a folder there, a read-only disk: the user's to fix, not a bug
        raise BridgeError(f"cannot write the report to {target}: {exc.strerror or exc}") from exc
    lines = [f"Report: {target} ({of_files(files).total_text()} spent, {files.status})", *fleet]
    if open_it:
        lines.append(open_page(target))
    return "\n".join(lines)


def open_page(target: Path) -> str:
    import webbrowser

    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return "No browser is available here; open the file yourself."
    if not browser.open(target.resolve().as_uri()):
        return "The browser did not open; open the file yourself."
    return "Opened in your browser."
