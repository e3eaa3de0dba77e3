"""The gate's read of a hook's payload from a real pipe, in this process: read to the end, give
up on a host that never closes its end, and never fail on a broken one."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import pytest

from autopilot_codex.gate import InputTimeout, read_stdin


@pytest.fixture
def pipe(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """The write end of a pipe whose read end is this process's stdin."""
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb", buffering=0) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        try:
            yield write_end
        finally:
            with contextlib.suppress(OSError):  # the test may have closed it
                os.close(write_end)


def test_the_payload_is_read_until_the_host_closes_its_end(pipe: int) -> None:
    os.write(pipe, b'{"hook_event_name": "Stop"}')
    os.close(pipe)
    assert read_stdin() == b'{"hook_event_name": "Stop"}'


def test_a_host_that_never_closes_its_end_is_given_up_on(pipe: int) -> None:
    os.write(pipe, b'{"partial": ')
    with pytest.raises(InputTimeout, match="its input did not end within 0.2 s"):
        read_stdin(timeout=0.2)


class _Closed:
    """A stdin already closed: no descriptor, and its buffer refuses to read."""

    buffer: _Closed

    def __init__(self) -> None:
        self.buffer = self

    def fileno(self) -> int:
        raise ValueError("I/O operation on closed file")

    def read(self, size: int = -1) -> bytes:
        raise ValueError("I/O operation on closed file")


def test_an_unreadable_stdin_reads_as_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Closed())
    assert read_stdin() == b""
