"""Replace a file atomically: readers see the old content or the new, never half of it.

A symbolic link where the file goes is replaced by the file, never written through: a
link planted in a shared folder cannot send a report (or a cache) to another file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO


def _mode(path: Path) -> int:
    """The mode the file keeps: the old file's, else 0644 (mkstemp makes 0600)."""
    try:
        found = path.lstat()
    except FileNotFoundError:
        return 0o644
    return 0o644 if stat.S_ISLNK(found.st_mode) else found.st_mode & 0o777


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A temporary file beside ``path``, renamed over it once the block ends without
    an error (removed otherwise)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        Path(temporary).chmod(mode)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to a temporary file beside ``path``,
    flush it, then rename it over."""
    with replacing(path) as stream:
        stream.write(text.encode("utf-8"))
