"""The texts the loop hands the implementer: task contracts, review findings, verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from .state import Finding, Task

PREFIX = "[autopilot-codex]"


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = max(0, limit - 40)
    return text[:keep] + f"\n[... {len(text) - keep} characters cut]"


def task_contract(task: Task, position: tuple[int, int]) -> str:
    index, total = position
    lines = [f"Task {task.id} ({index}/{total}): {task.title}"]
    if task.files:
        lines.append("Files: " + ", ".join(task.files))
    lines += _section("Steps", task.steps, numbered=True)
    lines += _section("Acceptance (the reviewer judges by these)", task.acceptance)
    lines += _section("Tests", task.tests)
    lines.append(
        "Work test-first where tests are listed. When the task is green, commit it as "
        f"`<type>(<scope>): {task.title}` (at most 72 characters), then end your turn."
    )
    return "\n".join(lines)


def findings_text(findings: Sequence[Finding]) -> str:
    out = []
    for number, f in enumerate(findings, 1):
        where = ""
        if f.file:
            where = f.file
            if f.line_start is not None:
                end = f.line_end if f.line_end not in (None, f.line_start) else None
                where += f":{f.line_start}" + (f"-{end}" if end is not None else "")
            where = f" ({where})"
        out.append(f"{number}. [{f.severity}] {f.title}{where}\n   Fix: {f.recommendation}")
    return "\n".join(out)


def fix_reason(summary: str, findings: Sequence[Finding]) -> str:
    text = f"{PREFIX} Review: fix before going on. {summary}".rstrip()
    if findings:
        text += "\n" + findings_text(findings)
    return text + "\nAddress these in the same task; your next edit is reviewed again."


def reject_reason(
    summary: str, findings: Sequence[Finding], files: Sequence[str], base_sha: str
) -> str:
    text = f"{PREFIX} Review: REJECTED. {summary}".rstrip()
    if findings:
        text += "\n" + findings_text(findings)
    if files:
        quoted = " ".join(_shell_quote(f) for f in files)
        text += (
            f"\nRevert these files to the task's base: git restore --source={base_sha[:12]} "
            f"--staged --worktree -- {quoted}\n(delete any of them that did not exist there)."
        )
    return (
        text
        + "\nThen re-plan your approach to this task; do not patch on top of the rejected change."
    )


def _section(title: str, items: Sequence[str], *, numbered: bool = False) -> list[str]:
    if not items:
        return []
    marks = [f"{i}." if numbered else "-" for i in range(1, len(items) + 1)]
    return [f"{title}:"] + [f"  {m} {item}" for m, item in zip(marks, items, strict=True)]


def _shell_quote(path: str) -> str:
    safe = all(c.isalnum() or c in "-_./+@:," for c in path)
    return path if safe and path else "'" + path.replace("'", "'\\''") + "'"
