"""Progress of a long scan on stderr: a bar with the count, the rate and the time left.

Only a terminal gets it (a CI log or a pipe gets nothing), and never with
``--quiet``. rich draws it, imported only when a bar is shown, so a hook pays
nothing for it. The scan reports how much is done (``update``) from a thread that
reads the workers' shared count, so the bar moves commit by commit, not only when
a chunk of thousands of commits comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from spillguard.core.output import is_terminal

if TYPE_CHECKING:
    from typing import TextIO

#: Seconds between two looks at the workers' count (and rich's redraws).
REDRAW_INTERVAL = 0.1


class Progress(Protocol):
    """Told how much there is, then how much is done, then that it is over."""

    def start(self, total: int, unit: str) -> None: ...

    def update(self, done: int) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    """Progress that shows nothing: not a terminal, or --quiet."""

    def start(self, total: int, unit: str) -> None:
        pass

    def update(self, done: int) -> None:
        pass

    def finish(self) -> None:
        pass


class TerminalProgress:
    """``commits ━━━━━━╸━━━━━  1200/6729  85 commits/s  0:00:14  ETA 0:01:05``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._bar: Any = None
        self._task: Any = None
        self._total = 0

    def start(self, total: int, unit: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(file=self._stream, highlight=False)
        self._total = total
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            # Redrawn by update(), from the scan's one reader thread: rich's own
            # refresh thread would exist when the workers are forked.
            auto_refresh=False,
        )
        self._task = self._bar.add_task(unit, total=total, rate=f"- {unit}/s")
        self._unit = unit
        self._bar.start()

    def update(self, done: int) -> None:
        if self._bar is None:
            return
        self._bar.update(self._task, completed=done)
        speed = self._bar.tasks[0].speed
        if speed is not None:
            self._bar.update(self._task, rate=f"{speed:,.0f} {self._unit}/s")
        self._bar.refresh()

    def finish(self) -> None:
        if self._bar is None:
            return
        self.update(self._total)  # the final count and rate stay on screen above the summary
        self._bar.stop()
        self._bar = None


def progress_for(stream: TextIO, *, quiet: bool) -> Progress:
    """A progress bar on ``stream`` when it is a TTY and not ``quiet``; else nothing."""
    if quiet or not is_terminal(stream):
        return NullProgress()
    return TerminalProgress(stream)
