"""A throwaway, real Postgres cluster for the tests: Debian's binaries, `initdb` and `pg_ctl` in a
temporary folder, trust authentication, listening on 127.0.0.1 (a free port) and on a unix
socket in that folder; stopped and removed at the end.

`initdb` refuses to run as root, and CI runs as root: there the cluster belongs to an
unprivileged user (`nobody`, through `runuser`, both in every Debian), and its folder is made
for that user. Nothing here is a mock: the fleet's tests talk to a real server.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOTS = (Path("/usr/lib/postgresql"),)
SUPERUSER = "postgres"
# The user that owns the cluster when the tests run as root (initdb will not run as root).
UNPRIVILEGED = "nobody"
_numbers = itertools.count(1)


def binaries() -> Path | None:
    """The newest installed version's bin folder holding `initdb` and `pg_ctl`, or None."""
    found: list[tuple[tuple[int, ...], Path]] = []
    for root in ROOTS:
        if not root.is_dir():
            continue
        for version in root.iterdir():
            bin_dir = version / "bin"
            if (bin_dir / "initdb").is_file() and (bin_dir / "pg_ctl").is_file():
                digits = tuple(int(p) for p in version.name.split(".") if p.isdigit())
                found.append((digits, bin_dir))
    return max(found)[1] if found else None


def missing() -> str:
    """Why no cluster can be made here ("" when one can)."""
    if binaries() is None:
        return "no Postgres binaries (initdb, pg_ctl) under /usr/lib/postgresql: apt-get install postgresql"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: initdb will not run as root"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Cluster:
    folder: Path
    port: int
    bin_dir: Path

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """One statement through `psql` (trust auth, over TCP): its unaligned output."""
        return subprocess.run(
            [str(self.bin_dir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, "-d", database, "-c", sql],
            check=True, capture_output=True, text=True, timeout=60,
        ).stdout.strip()  # fmt: skip

    def new_database(self) -> str:
        """A fresh, empty database of the cluster: its URL (one per test keeps tests apart)."""
        name = f"t{os.getpid()}_{next(_numbers)}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)


def _as_owner(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", UNPRIVILEGED, "--", *argv]


def _run(argv: list[str], folder: Path) -> None:
    done = subprocess.run(
        _as_owner(argv), cwd=folder, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr or done.stdout}"
        )


@contextlib.contextmanager
def cluster() -> Iterator[Cluster]:
    """A started cluster; stopped (immediately: nothing in it is worth a checkpoint) and
    removed when the block ends."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError(missing())
    # Not under pytest's tmp folder: that is private to root, and the cluster's owner must
    # reach its folder.
    # As root, in /tmp itself: a TMPDIR private to root would keep the owner out as well.
    base = "/tmp" if os.geteuid() == 0 and Path("/tmp").is_dir() else None
    folder = Path(tempfile.mkdtemp(prefix="autopilot-pg-", dir=base))
    data = folder / "data"
    try:
        if os.geteuid() == 0:
            os.chown(folder, *_ids(UNPRIVILEGED))
        _run([str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "-A", "trust",
              "-E", "UTF8", "--no-sync", "--locale=C.UTF-8"], folder)  # fmt: skip
        port = _start(bin_dir, data, folder)
        try:
            yield Cluster(folder, port, bin_dir)
        finally:
            _run(
                [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], folder
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _start(bin_dir: Path, data: Path, folder: Path) -> int:
    """Start the server on a free port; a port taken between the probe and the start is
    tried again with another."""
    last = ""
    for _ in range(5):
        port = _free_port()
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        try:
            _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"),
                  "-o", options, "-w", "-t", "60", "start"], folder)  # fmt: skip
        except RuntimeError as exc:
            log = folder / "server.log"
            last = f"{exc}\n{log.read_text() if log.exists() else ''}"
            continue
        return port
    raise RuntimeError(f"the Postgres server did not start: {last}")


def _ids(user: str) -> tuple[int, int]:
    import pwd

    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid
