"""The change a review sees: the work tree against a base, as git stores it.

What git's own view would hide is shown or named anyway:

- untracked files are listed without `.git/info/exclude` and `core.excludesFile`, only the
  in-tree `.gitignore` files (which are themselves in the diff when the change edits them);
  every file under an ignore rule made or changed since the loop started (its stat against
  the baseline recorded then) is named with its size and hash (ignored.py); without a
  baseline, when the change touches a `.gitignore`, the files it now ignores are named;
- files inside nested repositories and submodules are read as bytes and compared with the
  baseline (inside.py); git never enters them;
- paths flagged skip-worktree or assume-unchanged are compared with the base by content read
  here, since git's diff trusts the index for them;
- `-diff` or `binary` attributes cannot hide text: the diff runs with `--text`, and only
  content that really is binary (a NUL byte) is left out, named with its size and hash;
- a symlink is a link: its target path is shown, never the content it points to;
- a large new file is shown up to a bound and named with its size and hash; past the number
  of files shown in full, each new file is still named with its size and hash;
- settings in the git directory that run programs or hide content close the diff as a section
  of their own (tamper.py);
- the base's commit, trees and blobs are read from the bridge's own object store, each named
  by hashing it (basestore.py): a rewritten object in `.git/objects` cannot make an edit
  read as unchanged.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import nofollow
from ..rails.secrets import is_secret_path
from . import basestore, ignored, inside, nested, statcache, tamper
from .runner import run_bytes, run_git

# Untracked files are diffed in Python: this many shown in full, each up to this size.
UNTRACKED_FILES_MAX = 200
UNTRACKED_BYTES_MAX = 64 * 1024
# Files a changed .gitignore now ignores: named up to this many.
IGNORED_MAX = 200
_SNIFF = 8000  # git's own window for telling binary from text
# Untracked files by the in-tree .gitignore files only, never .git/info/exclude or an excludes
# file (`--exclude-standard` would read both).
_PER_DIR = ("--exclude-per-directory=.gitignore",)
_IGNORED_SINCE = "# files under an ignore rule, made or changed since the loop started:\n"
_DIFF_FLAGS = ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--no-relative")


@dataclass(frozen=True)
class Diff:
    text: str
    files: tuple[str, ...]
    findings: tuple[tamper.GitFinding, ...] = field(default=())

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8", "surrogateescape")).hexdigest()

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def diff_since(
    worktree: Path, base: str, *, exclude: tuple[str, ...] = (), baseline: Path | None = None
) -> Diff:
    """Working tree against `base`, untracked files included, secrets left out.

    `baseline`: the manifest of nested repositories recorded when the loop started
    (nested.record); files inside them whose bytes differ from it are shown. Without one,
    every file inside a nested repository is shown as new.

    Secrets are found by name in Python and excluded by literal path only when present: glob
    pathspecs for every secret pattern made each `git diff` about 2.6 times slower.
    """

    def hidden(path: str) -> bool:
        return is_secret_path(path) or _excluded(path, exclude)

    # The work tree read through the bridge's own stat data, never the index's (statcache.py),
    # and the base through objects the bridge hashed, never the repository's (basestore.py).
    own = statcache.own_index(worktree)
    store = basestore.objects(worktree, base)
    stats = run_bytes(
        worktree,
        *("diff", base, "--numstat", "-z", "--find-renames", *_DIFF_FLAGS),
        index_file=own,
        objects=store,
    )
    changed, carried, git_binary = _numstat(stats)
    flagged = {p: why for p, why in _flagged(worktree).items() if not hidden(p)}
    # A secret renamed or copied to an innocent name still carries the secret.
    secret = {p for p in changed if hidden(p)} | {new for old, new in carried if hidden(old)}
    binary = {p for p in git_binary if p not in secret and _really_binary(worktree, base, p, store)}
    skipped = sorted(secret | binary | set(flagged))
    spec = ["--", ".", *(f":(exclude,literal){p}" for p in skipped)] if skipped else []
    tracked = run_git(
        worktree,
        *("diff", base, "--text", "--find-renames", *_DIFF_FLAGS, *spec),
        index_file=own,
        objects=store,
    )
    parts = [tracked.rstrip("\n")] if tracked.strip() else []
    parts += [_binary_section(worktree, p) for p in sorted(binary)]
    flagged_changed = _flagged_sections(worktree, base, flagged, store)
    parts += [text for _, text in flagged_changed]
    others = _names(run_bytes(worktree, "ls-files", "--others", *_PER_DIR, "-z"))
    # Nested repositories (a name ending in "/"): below.
    untracked = [p for p in others if not hidden(p) and not p.endswith("/")]
    for n, path in enumerate(untracked):
        parts.append(_new_file(worktree, path, full=n < UNTRACKED_FILES_MAX))
    recorded = nested.load(baseline) if baseline else None
    inner = inside.changes(worktree, recorded[0] if recorded else None, hidden)
    room = max(0, UNTRACKED_FILES_MAX - len(untracked))
    parts += inside.sections(worktree, inner, _new_file, shown=room)
    named: list[tuple[str, str]] = []
    if recorded is not None:
        named = ignored.changes(worktree, recorded[1], hidden)
        parts += [_IGNORED_SINCE + "\n".join(line for _, line in named)] if named else []
    elif any(Path(p).name == ".gitignore" for p in [*changed, *untracked]):
        parts += _ignored(worktree, hidden)
    found = tuple(tamper.findings(worktree, own_excludes=exclude_lines(exclude)))
    found += tuple(tamper.flag_findings({shown(p): why for p, why in flagged.items()}))
    found += tuple(tamper.nested_findings(worktree, [r.path for r in inner.repos]))
    if found:
        lines = "\n".join(f"# - {f.line()}" for f in found)
        parts.append(f"# git: settings and files that run programs or hide changes\n{lines}")
    files = [p for p in changed if p not in secret and p not in flagged]
    files += [p for p, _ in flagged_changed] + untracked + [c.path for c in inner.files]
    files += [p for p, _ in named if p]
    return Diff(shown("\n".join(parts)), tuple(dict.fromkeys(map(shown, files))), found)


def changed_names(worktree: Path, base: str, *, exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The files `diff_since` would name (tracked changes and untracked files, secrets and
    `exclude` left out, files flagged skip-worktree or assume-unchanged included) from
    name-only git calls: for a prompt that names files, not their changes."""
    names_only = ("diff", base, "--name-only", "-z", "--find-renames", *_DIFF_FLAGS)
    store = basestore.objects(worktree, base)
    own = statcache.own_index(worktree)
    tracked = run_bytes(worktree, *names_only, index_file=own, objects=store)
    others = run_bytes(worktree, "ls-files", "--others", *_PER_DIR, "-z")
    names = [*_names(tracked), *_names(others)]
    names += [p for p, _ in _flagged_sections(worktree, base, _flagged(worktree), store)]
    kept = (p for p in names if not is_secret_path(p) and not _excluded(p, exclude))
    return tuple(dict.fromkeys(map(shown, kept)))


def unseen_in_head(
    worktree: Path, head: str, since: str | None, *, exclude: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """The tracked files the commits since `since` changed and whose content at `head` the
    work tree does not hold (changed there or gone, flags not trusted): what those commits
    carry that a review of the work tree never showed. A file new in the tree (HEAD holds
    less) is not named, nor one HEAD holds as `since` did (a filter's file, say)."""
    store = basestore.objects(worktree, head)
    own = statcache.own_index(worktree)
    args = ("diff", head, "--name-only", "-z", "--no-renames", *_DIFF_FLAGS)
    names = _names(run_bytes(worktree, *args, index_file=own, objects=store))
    names += [p for p, _ in _flagged_sections(worktree, head, _flagged(worktree), store)]
    if since and names:
        tree = ("diff-tree", "-r", "--name-only", "-z", "--no-renames", since, head, "--")
        committed = set(
            _names(run_bytes(worktree, *tree, objects=basestore.objects(worktree, since)))
        )
        names = [p for p in names if p in committed]
    return tuple(dict.fromkeys(shown(p) for p in names if not _excluded(p, exclude)))


def shown(text: str) -> str:
    """Text for the manager and the logs: a name's bytes that are not UTF-8 (decoded by
    `os.fsdecode` as lone surrogates, which no JSON encoder or HTTP client will send) written
    as `\\xff` escapes."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def exclude_lines(exclude: tuple[str, ...]) -> tuple[str, ...]:
    """The `.git/info/exclude` lines the loop itself may have written for its own folders."""
    return tuple(f"{e.strip('/')}/" for e in exclude) + tuple(f"/{e.strip('/')}/" for e in exclude)


def _excluded(path: str, exclude: tuple[str, ...]) -> bool:
    return any(path == e or path.startswith(e.rstrip("/") + "/") for e in exclude)


def _names(output: bytes) -> list[str]:
    return [os.fsdecode(name) for name in output.split(b"\0") if name]


def _numstat(out: bytes) -> tuple[list[str], list[tuple[str, str]], set[str]]:
    """Paths from `--numstat -z`, the (old, new) pairs of renames, and what git calls binary."""
    fields = out.split(b"\0")
    paths: list[str] = []
    carried: list[tuple[str, str]] = []
    binary: set[str] = set()
    i = 0
    while i < len(fields):
        record = fields[i]
        i += 1
        if not record:
            continue
        added, _, rest = record.partition(b"\t")
        _, _, name = rest.partition(b"\t")
        if name:
            new = os.fsdecode(name)
            paths.append(new)
        elif i + 1 < len(fields):
            old, new = os.fsdecode(fields[i]), os.fsdecode(fields[i + 1])
            i += 2
            paths += [old, new]
            carried.append((old, new))
        else:
            break
        if added == b"-":
            binary.add(new)
    return paths, carried, binary


def _flagged(worktree: Path) -> dict[str, str]:
    """Paths whose index entry makes git's diff skip the work tree: skip-worktree ("S") and
    assume-unchanged (a lowercase tag) entries of `ls-files -v`."""
    flagged: dict[str, str] = {}
    for entry in run_bytes(worktree, "ls-files", "-v", "-z").split(b"\0"):
        tag = entry[:1].decode("ascii", "replace")
        if len(entry) >= 3 and (tag == "S" or tag.islower()):
            flag = "skip-worktree" if tag == "S" else "assume-unchanged"
            flagged[os.fsdecode(entry[2:])] = f"{flag}: git's diff does not look at this file"
    return flagged


def _blobs(
    worktree: Path, base: str, paths: list[str], store: Path | None
) -> dict[str, bytes | None]:
    """`base:path` for each path as git stores it (None: the base has no such file).

    One `cat-file --batch` for all; a name with a newline cannot be asked this way, and reads
    as absent (then its whole content is shown as new).
    """
    asked = [p for p in paths if "\n" not in p]
    found: dict[str, bytes | None] = dict.fromkeys(paths)
    if not asked:
        return found
    query = "".join(f"{base}:{p}\n" for p in asked).encode("utf-8", "surrogateescape")
    out = run_bytes(worktree, "cat-file", "--batch", stdin=query, objects=store)
    pos = 0
    for path in asked:
        end = out.index(b"\n", pos)
        parts = out[pos:end].split()
        pos = end + 1
        if len(parts) == 3 and parts[1] in (b"blob", b"tree", b"commit", b"tag"):
            size = int(parts[2])
            if parts[1] == b"blob":
                found[path] = out[pos : pos + size]
            pos += size + 1
    return found


def _really_binary(worktree: Path, base: str, path: str, store: Path | None) -> bool:
    """Whether content git calls binary has a NUL byte (attributes can call any text binary)."""
    kind, data = nofollow.read(worktree, path)
    if kind == "missing":
        data = _blobs(worktree, base, [path], store)[path]
    return data is None or b"\0" in data[:_SNIFF]


def _describe(data: bytes) -> str:
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"


def _binary_section(worktree: Path, path: str) -> str:
    kind, data = nofollow.read(worktree, path)
    what = f"binary file, {_describe(data)}" if data is not None else f"binary file, {kind} now"
    return f"diff --git a/{path} b/{path}\n# {what} (content not shown)"


def _flagged_sections(
    worktree: Path, base: str, flagged: dict[str, str], store: Path | None
) -> list[tuple[str, str]]:
    """A diff of each flagged path whose work-tree content differs from the base's blob."""
    sections: list[tuple[str, str]] = []
    blobs = _blobs(worktree, base, sorted(flagged), store)
    for path, why in sorted(flagged.items()):
        kind, now = nofollow.read(worktree, path)
        before = blobs[path]
        if now == before:
            continue
        head = f"diff --git a/{path} b/{path}\n# {why} ({kind} in the work tree)"
        sections.append((path, head + "\n" + _unified(path, before, now)))
    return sections


def _unified(path: str, before: bytes | None, now: bytes | None) -> str:
    if any(data is not None and b"\0" in data[:_SNIFF] for data in (before, now)):
        return "# binary: " + (_describe(now) if now is not None else "removed")
    import difflib  # only a diff with untracked text loads it, not every hook reaching git

    old, new = _text(before or b""), _text(now or b"")
    return "\n".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", lineterm=""))


def _text(data: bytes) -> list[str]:
    text = data[:UNTRACKED_BYTES_MAX].decode("utf-8", "replace").splitlines()
    return [*text, "# (truncated)"] if len(data) > UNTRACKED_BYTES_MAX else text


def _new_file(root: Path, path: str, *, full: bool) -> str:
    header = f"diff --git a/{path} b/{path}"
    kind, data = nofollow.read(root, path.rstrip("/"))
    if kind == "link":
        target = os.fsdecode(data or b"")
        # As git stores a link: its target path, never what it points to.
        return (
            f"{header}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{target}"
        )
    if data is None:
        return f"{header}\nnew file\n# ({kind})"
    # Size and hash only where content is left out: a file shown whole must read the same as
    # after its commit (the review cache's key, steps.diff_key).
    named = f"{header}\nnew file\n# {_describe(data)}"
    if b"\0" in data[:_SNIFF]:
        return named + " (binary, content not shown)"
    if not full:
        return named + " (content not shown: too many new files)"
    text = data[:UNTRACKED_BYTES_MAX].decode("utf-8", "replace")
    lines = [f"+{line}" for line in text.splitlines()]
    body = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(lines)
    if len(data) > UNTRACKED_BYTES_MAX:
        return f"{named} (first {UNTRACKED_BYTES_MAX} bytes shown)\n{body}\n# (truncated)"
    return f"{header}\nnew file\n{body}"


def _ignored(worktree: Path, hidden: Callable[[str], bool]) -> list[str]:
    """Files and folders the in-tree .gitignore files ignore, named (the change edits one)."""
    args = ("ls-files", "--others", "--ignored", "--directory", *_PER_DIR, "-z")
    names = [n for n in _names(run_bytes(worktree, *args)) if not hidden(n)]
    lines = []
    for name in names[:IGNORED_MAX]:
        kind, data = nofollow.read(worktree, name.rstrip("/"))
        lines.append(f"# - {name} ({_describe(data) if data is not None else kind})")
    if len(names) > IGNORED_MAX:
        lines.append(f"# ... and {len(names) - IGNORED_MAX} more")
    if not lines:
        return []
    return ["# ignored by the .gitignore files this change touches:\n" + "\n".join(lines)]
