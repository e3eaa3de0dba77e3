"""Repositories inside a work tree whose own config runs a program: the attack of issue 33.

`plant_all` builds a top repository holding three kinds of inner repository, each with a
program planted in every config key (and hook) git might run from it:

- `loose/`: a folder with its own `.git`, never added to the top repository;
- `staged/`: the same, staged in the top index as a gitlink (what `git add -A` makes of it);
- `sub/`: a real submodule (committed gitlink, `.gitmodules`, its git dir under
  `.git/modules/sub`, a `.git` file pointing there), with `ignore = none` in `.gitmodules`.

Each program writes a marker file named after its key into `markers/` and then copies its
input through, so a filter that runs leaves a trace whatever git makes of its output. The
inner repositories' files are edited after planting, so a status inside one would have to
run the clean filter on them.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

# Each config key (or attribute-bound driver) and the program's marker name.
KEYS = (
    ("filter.nclean.clean", "filter-clean"),
    ("filter.nsmudge.smudge", "filter-smudge"),
    ("filter.nproc.process", "filter-process"),
    ("core.fsmonitor", "fsmonitor"),
    ("diff.ntext.textconv", "textconv"),
    ("diff.ntext.command", "diff-command"),
    ("diff.external", "diff-external"),
    ("core.sshCommand", "ssh-command"),
    ("core.pager", "pager"),
    ("core.editor", "editor"),
    ("core.askPass", "askpass"),
    ("credential.helper", "credential"),
    ("gpg.program", "gpg"),
    ("core.alternateRefsCommand", "alternate-refs"),
    ("uploadpack.packObjectsHook", "pack-objects-hook"),
    ("merge.nmerge.driver", "merge-driver"),
    ("interactive.diffFilter", "diff-filter"),
    ("submodule.sub.update", "submodule-update"),
)
# Bound through the inner repository's own .gitattributes.
ATTRIBUTES = (
    "a.txt filter=nclean diff=ntext merge=nmerge\n"
    "b.txt filter=nsmudge diff=ntext\n"
    "c.txt filter=nproc diff=ntext\n"
    "d.txt filter=ninc diff=ntext\n"
)
HOOKS = (
    "pre-commit",
    "post-commit",
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "fsmonitor-watchman",
    "pre-auto-gc",
    "post-rewrite",
)
FILES = ("a.txt", "b.txt", "c.txt", "d.txt")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t")
    env.update(GIT_COMMITTER_EMAIL="t@t")
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
    )
    return done.stdout.decode("utf-8", "replace").strip()


def program(folder: Path, name: str, markers: Path) -> Path:
    """A shell script that leaves `markers/name` and copies stdin through."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{markers}/{name}"\nexec cat\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _inner(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main")
    for name in FILES:
        (path / name).write_text(f"{name} one\n")
    (path / ".gitattributes").write_text(ATTRIBUTES)
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "inner")


def plant(git_dir: Path, markers: Path, bin_dir: Path) -> None:
    """Every key of KEYS in the config of `git_dir`, its hooks, an included file and a
    hooks path: each a program that writes its marker."""
    lines: list[str] = []
    for key, name in KEYS:
        section, _, rest = key.partition(".")
        sub, dot, leaf = rest.rpartition(".")
        header = f'[{section} "{sub}"]' if dot else f"[{section}]"
        lines += [header, f"\t{leaf if dot else rest} = {program(bin_dir, name, markers)}"]
    included = bin_dir / "included.config"
    included.write_text(
        f'[filter "ninc"]\n\tclean = {program(bin_dir, "include-clean", markers)}\n'
        f"\trequired = true\n"
    )
    hooks = bin_dir / "hooks"
    for hook in HOOKS:
        program(hooks, hook, markers)
        program(git_dir / "hooks", hook, markers)
    lines += ["[include]", f"\tpath = {included}", "[core]", f"\thooksPath = {hooks}"]
    with (git_dir / "config").open("a") as handle:
        handle.write("\n".join(lines) + "\n")


def _dirty(path: Path) -> None:
    for name in FILES:
        (path / name).write_text(f"{name} two\n")
    (path / "new.txt").write_text("new inside\n")


def plant_all(root: Path) -> tuple[Path, Path]:
    """(the top repository, the folder markers appear in). The top repository's HEAD is the
    base; `staged/` is staged, `loose/` untracked, `sub/` committed as a submodule."""
    markers = root / "markers"
    markers.mkdir(parents=True)
    source = root / "source"
    _inner(source)
    top = root / "top"
    top.mkdir()
    _git(top, "init", "-q", "-b", "main")
    (top / "README.md").write_text("# top\n")
    _git(top, "add", "-A")
    _git(top, "submodule", "add", "-q", str(source), "sub")
    _git(top, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
    _git(top, "add", "-A")
    _git(top, "commit", "-q", "-m", "base")
    _inner(top / "loose")
    _inner(top / "staged")
    _git(top, "add", "staged")
    for name, git_dir in (
        ("loose", top / "loose/.git"),
        ("staged", top / "staged/.git"),
        ("sub", top / ".git/modules/sub"),
    ):
        plant(git_dir, markers, root / f"bin-{name}")
        _dirty(top / name)
    return top, markers


def ran(markers: Path) -> list[str]:
    """The markers left, each with the program's arguments."""
    return sorted(f"{p.name}: {p.read_text().strip()}" for p in markers.iterdir())
