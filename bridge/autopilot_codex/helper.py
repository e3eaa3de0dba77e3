"""The hook's side of the resident helper: hand an admitted hook to a warm process, or say no.

A hook that reached a loop would spend most of its time importing the engine. A per-user
helper (`helper_server`) keeps the engine imported and forks a child per hook that runs exactly
the code the direct path runs, writing the answer to this process's own stdout and stderr
(passed over the socket). Nothing here decides anything: any doubt (no helper, a socket in a
folder we do not own, a helper of another version, one that does not answer in time) returns
None and the hook runs the direct path itself. The two-step handshake (the child says ready,
this side says go) means a hook is never run twice: after a timeout the child gets no go.

Standard library modules that load in well under a millisecond only (`_socket`, `fcntl`): this
runs before the hook's answer on every admitted hook.
"""

from __future__ import annotations

import os
import sys

from . import __version__
from .paths import run_dir as run_dir
from .paths import state_home_str

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .admitted import Admitted

# Bumped when the messages below change: a helper speaking another protocol is never used.
PROTOCOL = "apc-helper-2"
# How long a hook waits for the helper's child to say it is ready before running the hook
# itself: a fork of a warm process takes milliseconds, even on a loaded machine.
READY_TIMEOUT_S = 2.0
# A start attempt that did not give a listening helper is retried after this long at most.
RESPAWN_S = 30.0
OFF = "AUTOPILOT_CODEX_HELPER"
# The last name lets the test suite measure the helper too: it does nothing where the measuring
# package is not installed, and `install` never installs it.
_KEEP = frozenset(
    {
        *("HOME", "PATH", "LANG", "TZ", "TMPDIR", "USER", "LOGNAME"),
        *("AUTOPILOT_CODEX_HELPER_STATS", "COVERAGE_PROCESS_CONFIG"),
    }
)


def version() -> str:
    """What a helper must match to serve this hook: the release, the plugin's code where it
    lies, the interpreter and the protocol. In-place edits of the code are caught by the
    helper itself (helper_sources.Sources)."""
    return f"{PROTOCOL}|{__version__}|{bridge_dir()}|{sys.executable}|{sys.hexversion:x}"


def bridge_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # noqa: PTH100, PTH120


def tag(text: str) -> str:
    """A short name for a version (FNV-1a; not a secret, the folder is the protection)."""
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def names(home: str, ver: str) -> tuple[str, str, str]:
    """(socket, lock, start stamp) for this version, in the home's run folder."""
    base = os.path.join(run_dir(home), f"helper-{tag(ver)}")
    return base + ".sock", base + ".lock", base + ".start"


def private_dir(path: str) -> bool:
    """A folder only this user can enter or write, and not a link to one: nobody else can put
    a socket of theirs in it."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (
        (info.st_mode & 0o170000) == 0o040000
        and info.st_uid == os.getuid()
        and not info.st_mode & 0o077
    )


def enabled() -> bool:
    """On unless turned off, where processes fork, and when this hook's stdout and stderr are
    the process's own descriptors (the helper's child writes to those)."""
    if os.environ.get(OFF, "").strip() in ("0", "off", "no", "false") or not hasattr(os, "fork"):
        return False
    try:
        return sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False


class ChildDied(RuntimeError):
    """The helper's child took the hook and ended without its exit code: it crashed or was
    killed, and whatever it wrote is no answer (the gate fails closed, `failclosed`)."""


def run_via_helper(argv: list[str], admitted: Admitted) -> int | None:
    """The hook's exit code when the helper ran it (its answer is written); None: run it
    here (also when the helper is off, `enabled`). Raises ChildDied when the child took the
    hook and never finished it."""
    if not enabled():
        return None
    home = state_home_str()
    ver = version()
    sock_path, lock_path, start_path = names(home, ver)
    if not private_dir(run_dir(home)):
        _spawn(home, ver, start_path)
        return None
    import _socket

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(READY_TIMEOUT_S)
        try:
            token = _read_token(sock_path)
            _connect(conn, sock_path)
        except OSError:
            # No helper (never started, exited, crashed): this hook runs here, the next may not.
            if not _locked(lock_path):
                _spawn(home, ver, start_path)
            return None
        return _handover(conn, argv, admitted, (ver, token), sock_path)
    finally:
        conn.close()


def _connect(conn: object, path: str) -> None:
    """connect(), through the folder when the path is longer than a socket address allows."""
    if len(os.fsencode(path)) < 100:
        conn.connect(path)  # type: ignore[attr-defined]
        return
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(os.path.dirname(path))
        conn.connect(os.path.basename(path))  # type: ignore[attr-defined]
    finally:
        os.fchdir(here)
        os.close(here)


def _read_token(sock_path: str) -> bytes:
    """The helper's secret, in a user-only file beside its socket: only a process that can
    read the state home (never the implementer's sandbox, see the wall) may use the helper,
    whose children run outside that sandbox."""
    with open(token_path(sock_path), "rb") as handle:
        return handle.read(256)


def token_path(sock_path: str) -> str:
    return sock_path[: -len(".sock")] + ".token"


def _handover(
    conn: object, argv: list[str], admitted: Admitted, who: tuple[str, bytes], sock_path: str
) -> int | None:
    import _socket

    ver, token = who
    sock: _socket.socket = conn  # type: ignore[assignment]
    try:
        cwd = os.open(".", os.O_RDONLY)
    except OSError:
        return None
    mask = os.umask(0o022)
    os.umask(mask)
    try:
        message = encode(
            [
                ver.encode(),
                b"\0".join(os.fsencode(a) for a in argv),
                b"\0".join(k + b"=" + v for k, v in os.environb.items()),
                str(mask).encode(),
                os.fsencode(admitted.worktree),
                admitted.style.encode(),
                b"1" if admitted.repair else b"",
                admitted.raw,
                f"{sys.stdout.encoding}\0{sys.stderr.encoding}".encode(),
                token,
            ]
        )
        try:
            sock.sendall(message)
            ready = _read_line(sock)
        except OSError:  # a timeout is an OSError too
            _replace_hung(sock, sock_path)
            return None
        if ready != b"R" + ver.encode():
            return None
        # The descriptors go with the go, not before: a helper that never reads must not hold
        # this hook's stdout open (the host would wait for its end).
        rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _fds(cwd))]
        try:
            sock.settimeout(None)
            sock.sendmsg([b"G"], rights)
        except OSError:
            return None
    finally:
        os.close(cwd)
    # From here the child runs the hook: whatever happens, it is not run again here.
    try:
        said = sock.recv(16)
    except OSError:
        said = b""
    if said[:1] != b"E" or not said[1:].isdigit():
        raise ChildDied("the helper's child ended without answering")
    return int(said[1:])


def _fds(cwd: int) -> bytes:
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (1, 2, cwd))


def _read_line(sock: object) -> bytes:
    data = b""
    while not data.endswith(b"\n") and len(data) < 4096:
        chunk = sock.recv(4096 - len(data))  # type: ignore[attr-defined]
        if not chunk:
            break
        data += chunk
    return data[:-1] if data.endswith(b"\n") else b""


def encode(fields: list[bytes]) -> bytes:
    """Length-prefixed fields after their count, the whole prefixed by its length."""
    parts = [b"%d\n" % len(fields)]
    for field in fields:
        parts.append(b"%d\n" % len(field))
        parts.append(field)
    body = b"".join(parts)
    return b"%d\n" % len(body) + body


def decode(data: bytes) -> list[bytes]:
    count, _, rest = data.partition(b"\n")
    fields: list[bytes] = []
    for _ in range(int(count)):
        size, _, rest = rest.partition(b"\n")
        fields.append(rest[: int(size)])
        rest = rest[int(size) :]
    return fields


def _locked(path: str) -> bool:
    """True while a helper holds its lock (it is alive, busy starting or serving)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _replace_hung(sock: object, sock_path: str) -> None:
    """The helper took the connection but never answered: take its socket away so the next
    hook starts a fresh helper, and end it where the system names the peer (Linux)."""
    import _socket

    try:
        os.unlink(sock_path)
    except OSError:
        pass
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return
    try:
        cred = sock.getsockopt(_socket.SOL_SOCKET, option, 12)  # type: ignore[attr-defined]
    except OSError:
        return
    pid = int.from_bytes(cred[:4], sys.byteorder)
    uid = int.from_bytes(cred[4:8], sys.byteorder)
    if pid <= 1 or uid != os.getuid() or pid == os.getpid():
        return
    try:
        # Only a helper is ended: whatever else listens there is left alone.
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            if b"autopilot_codex.helper_server" not in handle.read():
                return
        os.kill(pid, 9)
    except OSError:
        pass


def _spawn(home: str, ver: str, start_path: str) -> None:
    """Start a helper in the background, at most once per RESPAWN_S: this hook does not wait."""
    import time

    try:
        os.makedirs(run_dir(home), mode=0o700, exist_ok=True)
        if not private_dir(run_dir(home)):
            return
        if time.time() - os.stat(start_path).st_mtime < RESPAWN_S:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        with open(start_path, "wb"):
            pass
        os.utime(start_path)
        # The helper outlives this hook by minutes and /proc shows its starting environment to
        # the same user: it starts with none of this hook's credentials. Each child takes its
        # own hook's whole environment (helper_child), so the helper needs only these.
        env = {k: v for k, v in os.environ.items() if k in _KEEP or k.startswith("LC_")}
        from .detached import start

        start("autopilot_codex.helper_server", [home, ver], env)
    except (OSError, NotImplementedError, AttributeError, TypeError):
        return
