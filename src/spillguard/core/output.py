"""Where a report goes: stdout, a device or FIFO written in place, or a file replaced atomically."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

from spillguard.core.errors import UsageError

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream is not a terminal
        return False


@contextlib.contextmanager
def open_output(target: str | None) -> Iterator[TextIO]:
    """A text stream for ``target``; a regular file appears only once complete.

    A device, a FIFO, a symbolic link (``/dev/stdout`` is one) or ``-`` is written
    in place: renaming a temporary file over ``/dev/null`` would replace the device
    for the whole machine, and over ``/dev/stdout`` would cut the caller's redirect.
    """
    if target is None or target == "-":
        yield sys.stdout
        return
    if not target.strip():
        raise UsageError("--output needs a file name ('-' for stdout)")
    path = Path(target)
    if _written_in_place(path):
        try:
            device = path.open("w", encoding="utf-8", newline="")
        except OSError as error:
            raise UsageError(f"--output {target}: cannot write: {error.strerror}") from None
        with device:
            yield device
        return
    with _atomic(path, target) as stream:
        yield stream


@contextlib.contextmanager
def _atomic(path: Path, target: str) -> Iterator[TextIO]:
    """A temporary file beside ``path``, renamed over it once complete.

    It is readable by its owner only until then (a report holds paths, lines and,
    with ``--include-plaintext``, secrets), and removed on any exit but success:
    an error, Ctrl-C, or SIGTERM/SIGHUP, which are turned into an exit that unwinds.
    """
    directory = path.parent if str(path.parent) else Path()
    with _terminations_unwind():
        import tempfile  # only when writing a file: hooks write to stderr

        # A signal between mkstemp's creating the file and the ``try`` below would
        # leave it behind: they wait until the file is ours to remove.
        held = _hold_terminations()
        try:
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
        except OSError as error:
            _release(held)
            raise UsageError(f"--output {target}: cannot write: {error.strerror}") from None
        try:
            _release(held)
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
                yield stream
            # mkstemp's 0600 until complete; then what `>` would give, or the old mode.
            Path(temporary).chmod(_mode_for(path))
            Path(temporary).replace(path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


@contextlib.contextmanager
def _terminations_unwind() -> Iterator[None]:
    """SIGTERM and SIGHUP raise SystemExit (128 + the signal) instead of killing the
    process outright, so that ``finally`` blocks run; the old handlers come back after."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    numbers = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    previous = {number: signal.signal(number, _exit_on_signal) for number in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _hold_terminations() -> set[int]:
    """Block SIGINT, SIGTERM and SIGHUP; the mask before, for ``_release``."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # Windows: no masks, a narrower window
        return set()
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    numbers = {getattr(signal, name) for name in names if hasattr(signal, name)}
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, numbers))


def _release(held: set[int]) -> None:
    """Restore the mask ``_hold_terminations`` replaced; a held signal arrives now."""
    import signal

    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _exit_on_signal(number: int, _frame: object) -> None:
    raise SystemExit(128 + number)


def _mode_for(path: Path) -> int:
    """The replaced file's mode, or what the umask gives a new file."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _written_in_place(path: Path) -> bool:
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False  # nothing there yet: a new regular file
    if stat.S_ISDIR(mode) or (stat.S_ISLNK(mode) and path.is_dir()):
        raise UsageError(f"--output {path}: is a directory")
    return not stat.S_ISREG(mode)


def discard_stdout() -> None:
    """Point stdout at /dev/null, so the final flush at exit cannot fail on a closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
