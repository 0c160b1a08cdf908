"""Plain files and directories on disk; no git needed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.decode import decode, is_binary
from spillguard.models import Fragment, Skipped

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from spillguard.sources import Source

SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn"})


def iter_files(paths: Iterable[str], *, max_size: int) -> Source:
    """Fragments for every file under ``paths``, in a stable order."""
    for given in paths:
        root = Path(given)
        if root.is_dir():
            for path in _walk(root):
                yield _read(path, _display(path), max_size)
        elif root.exists() or root.is_symlink():
            yield _read(root, given, max_size)
        else:
            yield Skipped(path=given, reason="does not exist", failed=True)


def _walk(root: Path) -> Iterator[Path]:
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES)
        for name in sorted(files):
            yield Path(directory, name)


def _display(path: Path) -> str:
    return path.as_posix().removeprefix("./")


def _read(path: Path, display: str, max_size: int) -> Fragment | Skipped:
    try:
        if path.is_symlink() or not path.is_file():
            return Skipped(path=display, reason="not a regular file")
        if path.stat().st_size > max_size:
            return Skipped(path=display, reason="too large")
        data = path.read_bytes()
    except OSError as error:
        return Skipped(path=display, reason=f"unreadable: {error.strerror}", failed=True)
    if is_binary(data):
        return Skipped(path=display, reason="binary")
    return Fragment(path=display, text=decode(data))
