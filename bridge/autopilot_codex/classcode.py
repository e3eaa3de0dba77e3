"""The methods `dataclasses` writes for each record class, compiled once and kept beside the
package's own compiled modules (issue 35).

`@dataclass` writes `__init__`, `__repr__`, `__eq__` (and for a frozen class `__setattr__`,
`__delattr__`, `__hash__`) as source text and compiles each one with `exec`, in every process
that defines the class: ~350 compilations, 30-40 ms of CPU, for the engine's ~60 records a
hook without the resident helper loads, more than any module it imports. The text depends
only on the class's fields and options, so this keeps the code objects compiled from it, keyed
by that exact text: a class whose text is new (or changed) is compiled as before and added.
What the methods do is unchanged; where they were compiled is all that differs.

Only the launcher's hook process uses it (`gate.hook_main`), and only for a hook that runs
the engine here rather than in the resident helper. The file lies in the package's
`__pycache__` (kept per interpreter and bytecode version, like the compiled modules there)
and is trusted as they are: read only when it is a plain file of this user that no one else
may write; anything else, a corrupt file or a folder that cannot be written, compiles as if
it were not there.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

# Entries a file may hold before it starts over with the classes of one process: texts of
# classes an older version of the code defined are never looked up again.
MAX_ENTRIES = 4000

_loaded: dict[str, CodeType] = {}
_added: dict[str, CodeType] = {}
_used: set[str] = set()
_installed = False


def cache_path() -> str | None:
    """The file for this interpreter's bytecode; None where it has no such version."""
    tag = sys.implementation.cache_tag
    bootstrap = sys.modules.get("_frozen_importlib_external")
    magic = getattr(bootstrap, "MAGIC_NUMBER", None)
    if not tag or not isinstance(magic, bytes):
        return None
    here = os.path.dirname(os.path.abspath(__file__))  # noqa: PTH100, PTH120
    return os.path.join(here, "__pycache__", f"dataclass-code.{tag}-{magic.hex()}.bin")  # noqa: PTH118


def install() -> None:
    """Read the kept code and have `dataclasses` compile through it from now on."""
    global _installed  # noqa: PLW0603 - one installation per process
    if _installed:
        return
    import dataclasses

    _installed = True
    _loaded.update(_read(cache_path()))
    # `dataclasses` finds `exec` in its own globals before the builtins: its methods' text
    # goes through `_exec` here, everything else in the process is untouched.
    dataclasses.exec = _exec  # type: ignore[attr-defined]


def _exec(source: object, globals: dict[str, object] | None = None, locals: object = None) -> None:  # noqa: A002
    """`exec`, with a text compiled before taken from the cache."""
    if type(source) is str:
        code = _loaded.get(source) or _added.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _added[source] = code
        _used.add(source)
        source = code
    exec(source, globals, locals)  # type: ignore[arg-type]  # noqa: S102 - the text dataclasses wrote


def save() -> None:
    """Keep what this process compiled, when it compiled anything; never raises."""
    if not _added or (path := cache_path()) is None:
        return
    merged = {**_loaded, **_added}
    if len(merged) > MAX_ENTRIES:
        merged = {k: v for k, v in merged.items() if k in _used}
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        data = marshal.dumps(merged)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            os.fchmod(fd, 0o644)  # whatever the umask: a group-writable file is never read
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return
    _loaded.update(_added)
    _added.clear()


def _read(path: str | None) -> dict[str, CodeType]:
    """The kept code, or nothing when the file is missing, not ours, writable by others, or
    not what `save` writes."""
    if path is None or not hasattr(os, "getuid"):
        return {}
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if (
            (info.st_mode & 0o170000) != 0o100000
            or info.st_uid != os.getuid()
            or info.st_mode & 0o022
        ):
            return {}
        table = marshal.loads(b"".join(iter(lambda: os.read(fd, 1 << 20), b"")))
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    finally:
        os.close(fd)
    if not isinstance(table, dict):
        return {}
    code_type = type(_read.__code__)
    return {k: v for k, v in table.items() if type(k) is str and type(v) is code_type}
