"""Progress of a long scan on stderr: commits done of total and throughput.

Only a terminal gets it (a CI log or a pipe gets nothing), and never with
``--quiet``. It is plain text redrawn with a carriage return: no rich, no colour,
so a hook pays nothing to import it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from spillguard.output import is_terminal

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

#: Seconds between two redraws: often enough to look alive, rarely enough to cost nothing.
REDRAW_INTERVAL = 0.1
#: ESC [ K: erase to the end of the line, so a shorter redraw leaves no tail behind.
_ERASE_LINE = "\x1b[K"


class Progress(Protocol):
    """Told how much there is, then each step, then that it is over."""

    def start(self, total: int | None, unit: str) -> None: ...

    def advance(self, steps: int = 1) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    """Progress that shows nothing: not a terminal, or --quiet."""

    def start(self, total: int | None, unit: str) -> None:
        pass

    def advance(self, steps: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass


class TerminalProgress:
    """One line on a terminal, redrawn in place: ``120/3400 commits  85.2 commits/s``."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._total: int | None = None
        self._unit = ""
        self._done = 0
        self._started = 0.0
        self._drawn = 0.0

    def start(self, total: int | None, unit: str) -> None:
        self._total, self._unit, self._done = total, unit, 0
        self._started = self._clock()
        self._drawn = self._started
        self._draw()

    def advance(self, steps: int = 1) -> None:
        self._done += steps
        now = self._clock()
        if now - self._drawn >= REDRAW_INTERVAL:
            self._drawn = now
            self._draw()

    def finish(self) -> None:
        self._draw()  # the final count and rate stay on screen above the summary
        self._stream.write("\n")
        self._stream.flush()

    def _draw(self) -> None:
        elapsed = self._clock() - self._started
        rate = self._done / elapsed if elapsed > 0 else 0.0
        done = f"{self._done}/{self._total}" if self._total is not None else f"{self._done}"
        self._stream.write(f"\r{done} {self._unit}  {rate:.1f} {self._unit}/s{_ERASE_LINE}")
        self._stream.flush()


def progress_for(stream: TextIO, *, quiet: bool) -> Progress:
    """A terminal progress line on ``stream`` when it is a TTY and not ``quiet``; else nothing."""
    if quiet or not is_terminal(stream):
        return NullProgress()
    return TerminalProgress(stream)
