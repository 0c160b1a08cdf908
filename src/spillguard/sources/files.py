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


def iter_files(paths: Iterable[str], *, max_size: int, root: str | None = None) -> Source:
    """Fragments for every file under ``paths``, in a stable order.

    A file inside ``root`` (the repository) is named from it, as history and tree
    scans name files: ``allowlist_paths`` and fingerprints then see the same path
    however it was given on the command line.
    """
    top = None if root is None else str(Path(root).absolute())
    for given in paths:
        start = Path(given)
        if start.is_dir():
            for path in _walk(start):
                yield _read(path, _display(path, top), max_size)
        elif start.exists() or start.is_symlink():
            yield _read(start, _display(start, top), max_size)
        else:
            yield Skipped(path=given, reason="does not exist", failed=True)


def _walk(root: Path) -> Iterator[Path]:
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES)
        for name in sorted(files):
            yield Path(directory, name)


def _display(path: Path, top: str | None) -> str:
    if top is not None:
        # absolute, not resolve: a symbolic link is named where it is, not where it points.
        relative = os.path.relpath(path.absolute(), top)
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return Path(relative).as_posix()
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
