"""What the user watches: a live panel on a terminal (rich), plain lines anywhere else."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol, TextIO

from ..output import visible
from ..spend import usd
from ..stream import StreamState

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.live import Live

    from .rollout import RoundRecord


class View(Protocol):
    def round_started(self, round_no: int, rounds: int, role: str, attempt: int) -> None: ...
    def update(self, state: StreamState) -> None: ...
    def round_ended(self, record: RoundRecord, cost_so_far: float, shown: str) -> None: ...
    def note(self, text: str) -> None: ...
    def close(self) -> None: ...


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def _ended_line(record: RoundRecord, cost_so_far: float, estimated: bool) -> str:
    files = len(record.files_changed)
    marks = f", {' '.join(record.markers)}" if record.markers else ""
    return (
        f"round {record.round} {record.role}: {record.outcome}{marks}, {files} "
        f"{'file' if files == 1 else 'files'} changed, "
        f"{usd(cost_so_far, estimated=estimated)} so far -> {record.next}"
    )


class PlainView:
    """One line per change: safe for logs, pipes and CI."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.action = ""
        # Once a round's model was priced by rule, every later total is an estimate too.
        self.estimated = False

    def _say(self, text: str) -> None:
        # The round's tool calls and messages are the implementer's text (output.visible).
        self.out.write(visible(text) + "\n")
        self.out.flush()

    def round_started(self, round_no: int, rounds: int, role: str, attempt: int) -> None:
        again = f" (retry {attempt - 1})" if attempt > 1 else ""
        self.action = ""
        self._say(f"round {round_no}/{rounds} {role}{again}: started")

    def update(self, state: StreamState) -> None:
        if state.last_action and state.last_action != self.action:
            self.action = state.last_action
            self._say(f"  {state.last_action}")

    def round_ended(self, record: RoundRecord, cost_so_far: float, shown: str) -> None:
        self.estimated = self.estimated or bool(record.unpriced)
        self._say(_ended_line(record, cost_so_far, self.estimated))
        if shown.strip():
            self._say("  " + shown.strip().splitlines()[-1][:200])

    def note(self, text: str) -> None:
        self._say(text)

    def close(self) -> None:
        return None


class LiveView:
    """A small live panel: round n/N, elapsed time, the last action, cost so far."""

    def __init__(self, out: TextIO) -> None:
        from rich.console import Console

        self.console = Console(file=out, highlight=False)
        self.live: Live | None = None
        self.started = time.monotonic()
        self.round_started_at = self.started
        self.title = ""
        self.action = ""
        self.cost = 0.0
        self.round_cost = 0.0
        self.estimated = False

    def _render(self) -> RenderableType:
        from rich.text import Text

        now = time.monotonic()
        text = Text()
        text.append(self.title, style="bold")
        text.append(
            f"  round {_clock(now - self.round_started_at)}, total {_clock(now - self.started)}"
        )
        so_far = usd(self.cost + self.round_cost, estimated=self.estimated)
        text.append(f"  {so_far} so far\n", style="cyan")
        text.append(f"  {self.action or 'starting…'}", style="dim")
        return text

    def round_started(self, round_no: int, rounds: int, role: str, attempt: int) -> None:
        from rich.live import Live

        again = f" (retry {attempt - 1})" if attempt > 1 else ""
        self.title = f"round {round_no}/{rounds} {role}{again}"
        self.action, self.round_cost = "", 0.0
        self.round_started_at = time.monotonic()
        if self.live is None:
            # Transient: the panel is wiped when the run ends, so the run's last line is the
            # last thing on screen (printed lines above it stay).
            self.live = Live(
                get_renderable=self._render,
                console=self.console,
                refresh_per_second=4,
                transient=True,
            )
            self.live.start()

    def update(self, state: StreamState) -> None:
        self.action = visible(state.last_action) or self.action
        self.round_cost = state.cost_usd or 0.0

    def round_ended(self, record: RoundRecord, cost_so_far: float, shown: str) -> None:
        self.cost, self.round_cost = cost_so_far, 0.0
        self.estimated = self.estimated or bool(record.unpriced)
        line = _ended_line(record, cost_so_far, self.estimated)
        self.console.print(visible(line), markup=False)
        if shown.strip():
            last = visible(shown.strip().splitlines()[-1][:200])
            self.console.print("  " + last, style="dim", markup=False)

    def note(self, text: str) -> None:
        self.console.print(visible(text), markup=False)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def make_view(out: TextIO) -> View:
    isatty = getattr(out, "isatty", None)
    return LiveView(out) if callable(isatty) and isatty() else PlainView(out)
