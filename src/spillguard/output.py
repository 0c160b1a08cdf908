"""Where a report goes: stdout, a device or FIFO written in place, or a file replaced atomically."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO


@contextlib.contextmanager
def open_output(target: str | None) -> Iterator[TextIO]:
    """A text stream for ``target``; a regular file appears only once complete.

    A device, FIFO or ``-`` is written in place: renaming a temporary file over
    ``/dev/null`` would replace the device for the whole machine.
    """
    if target is None or target == "-":
        yield sys.stdout
        return
    path = Path(target)
    if _is_special(path):
        with path.open("w", encoding="utf-8") as stream:
            yield stream
        return
    directory = path.parent if str(path.parent) else Path()
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as error:
        raise UsageError(f"--output {target}: cannot write: {error.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            yield stream
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _is_special(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    if stat.S_ISDIR(mode):
        raise UsageError(f"--output {path}: is a directory")
    return not stat.S_ISREG(mode)
