"""A real headless Chromium, driven over the DevTools protocol on a pipe, with the stdlib only.

`--remote-debugging-pipe` makes Chromium read commands on its fd 3 and write answers and events
on its fd 4, each one JSON message ended by a NUL byte: no port, no websocket, nothing another
process on the machine can reach. The page's own policy forbids scripts; `Runtime.evaluate`
runs in the page all the same, which is how the tests read its layout."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

# Generous: a loaded CI machine starts a browser slowly; nothing here waits on a clock otherwise.
TIMEOUT_S = 120.0
# Flags for a browser that must not reach the network or need a display, a GPU or a sandbox
# (the tests may run as root in a container).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """The browser could not be started, or answered a command with an error."""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _above_four(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return moved


class Browser:
    """One Chromium process and one tab, attached in flat mode."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        # Chromium wants exactly fds 3 and 4; a small Python puts the pipes there and becomes it
        # (a POSIX shell names no fd above 9). Both ends are first moved above 4, so putting one
        # in place never overwrites the other, whatever numbers pytest's capture left free.
        to_browser, from_browser = (_above_four(fd) for fd in (to_browser, from_browser))
        place = (
            f"import os, sys; os.dup2({to_browser}, 3); os.dup2({from_browser}, 4); "
            "os.execv(sys.argv[1], sys.argv[1:])"
        )
        command = [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"]
        self._proc = subprocess.Popen(
            [sys.executable, "-c", place, *command],
            pass_fds=(to_browser, from_browser),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        try:
            target = self.send("Target.createTarget", url="about:blank")["targetId"]
            attached = self.send("Target.attachToTarget", targetId=target, flatten=True)
            self._session = attached["sessionId"]
            self.send("Page.enable", session=True)
        except (OSError, BrowserError):
            self.close()
            raise

    def close(self) -> None:
        os.close(self._write)
        os.close(self._read)
        self._proc.terminate()
        try:
            self._proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:  # pragma: no cover - a browser deaf to SIGTERM
            self._proc.kill()
            self._proc.wait()

    def send(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """One command, and its result once it comes (events before it are dropped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            got = self._receive()
            if got.get("id") == self._next_id:
                if "error" in got:
                    raise BrowserError(f"{method}: {got['error']}")
                result: dict[str, Any] = got["result"]
                return result

    def wait_for(self, event: str) -> dict[str, Any]:
        while True:
            got = self._receive()
            if got.get("method") == event:
                params: dict[str, Any] = got["params"]
                return params

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._read], [], [], TIMEOUT_S)
            chunk = os.read(self._read, 1 << 16) if ready else b""
            if not chunk:
                raise BrowserError(f"the browser went quiet (exit code {self._proc.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def open(self, page: Path, width: int, height: int = 900) -> None:
        """The page at `width` CSS pixels wide, loaded."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.send("Page.navigate", session=True, url=page.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """A JS expression's value in the page, as JSON."""
        got = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in got:
            raise BrowserError(f"{expression[:60]}: {got['exceptionDetails']}")
        return got["result"].get("value")

    def accessible_name(self, selector: str) -> str:
        """The name a screen reader announces for the first element `selector` matches."""
        root = self.send("DOM.getDocument", session=True)["root"]["nodeId"]
        node = self.send("DOM.querySelector", session=True, nodeId=root, selector=selector)
        nodes = self.send(
            "Accessibility.getPartialAXTree",
            session=True,
            nodeId=node["nodeId"],
            fetchRelatives=False,
        )["nodes"]
        return str(nodes[0].get("name", {}).get("value", ""))

    def screenshot(self, out: Path) -> None:
        """The whole page, not just the viewport, as a PNG."""
        size = self.send("Page.getLayoutMetrics", session=True)["cssContentSize"]
        shot = self.send(
            "Page.captureScreenshot",
            session=True,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
        )
        out.write_bytes(base64.b64decode(shot["data"]))
