"""Plain files and directories on disk; no git needed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.core.decode import LARGE_BINARY, SNIFF_BYTES, is_binary, judged_as, skipped
from spillguard.core.models import Fragment, Skipped

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from spillguard.sources import Source

SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn"})


#: One file to read: where it is, and the path reports give it (None: a path given on
#: the command line that does not exist).
FileEntry = tuple[str, "str | None"]


def list_files(paths: Iterable[str], *, root: str | None = None) -> list[FileEntry]:
    """Every file under ``paths``, in a stable order, with its name in reports;
    nothing is read yet (``read_files`` reads them, each worker its share).

    A file inside ``root`` (the repository) is named from it, as history and tree
    scans name files: ``allowlist_paths`` and fingerprints then see the same path
    however it was given on the command line.
    """
    top = None if root is None else str(Path(root).absolute())
    entries: list[FileEntry] = []
    for given in paths:
        start = Path(given)
        if start.is_dir():
            entries += ((str(path), _display(path, top)) for path in _walk(start))
        elif start.exists() or start.is_symlink():
            entries.append((given, _display(start, top)))
        else:
            entries.append((given, None))
    return entries


def read_files(entries: Iterable[FileEntry], *, max_size: int) -> Source:
    """The Fragments (one per reading) or Skipped item of each listed file, in order."""
    for path, display in entries:
        if display is None:
            yield Skipped(path=path, reason="does not exist", failed=True)
        else:
            yield from _read(Path(path), display, max_size)


def _walk(root: Path) -> Iterator[Path]:
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES)
        # A symbolic link to a directory is not followed, but it is a file of its own
        # (git stores it as one): its target is judged.
        links = [d for d in subdirectories if Path(directory, d).is_symlink()]
        for name in sorted(files + links):
            yield Path(directory, name)


def _display(path: Path, top: str | None) -> str:
    if top is not None:
        # absolute, not resolve: a symbolic link is named where it is, not where it points.
        relative = os.path.relpath(path.absolute(), top)
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return Path(relative).as_posix()
    return path.as_posix().removeprefix("./")


def _read(path: Path, display: str, max_size: int) -> tuple[Fragment | Skipped, ...]:
    try:
        if path.is_symlink():  # its target is text, as git stores a symlink
            return (Fragment(path=display, text=os.fspath(path.readlink())),)
        if not path.is_file():
            return (Skipped(path=display, reason="not a regular file"),)
        with path.open("rb") as handle:
            data = handle.read(SNIFF_BYTES)
            if path.stat().st_size > max_size and is_binary(data):
                return (skipped(display, LARGE_BINARY),)  # not read any further
            data += handle.read()
    except OSError as error:
        return (Skipped(path=display, reason=f"unreadable: {error.strerror}", failed=True),)
    texts, unopened = judged_as(display, data, max_size)
    found = tuple(Fragment(path=where, text=text) for where, text in texts)
    return found if unopened is None else (skipped(display, unopened), *found)
