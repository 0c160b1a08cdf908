"""Scratch folders for the gits a hook starts, made without ``tempfile``.

Importing ``tempfile`` (and ``shutil`` with it, which loads ``bz2`` and ``lzma``) costs a
commit or push hook several milliseconds, for one empty folder that holds a copy of
the index, or the git directory of its own git reads objects through.
"""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterator

#: Names tried before giving up (another process took the name: a one in four billion
#: chance each).
_ATTEMPTS = 4


@contextlib.contextmanager
def scratch(parent: str, *, mode: int = 0o777) -> Iterator[str | None]:
    """An empty folder in ``parent`` for the run, removed with all it holds at the end;
    None if none can be made there."""
    path = None
    for _ in range(_ATTEMPTS):
        candidate = os.path.join(parent, f"spillguard-{os.getpid()}-{os.urandom(4).hex()}")  # noqa: PTH118
        try:
            os.mkdir(candidate, mode)  # noqa: PTH102 - not pathlib: see the module's docstring
        except FileExistsError:
            continue
        except OSError:
            break
        path = candidate
        break
    if path is None:
        yield None
        return
    try:
        yield path
    finally:
        for where, folders, files in os.walk(path, topdown=False):
            for name in files:
                os.unlink(os.path.join(where, name))  # noqa: PTH108, PTH118
            for name in folders:
                os.rmdir(os.path.join(where, name))  # noqa: PTH106, PTH118
        os.rmdir(path)  # noqa: PTH106


def temporary_parent() -> str:
    """Where private scratch folders go: ``TMPDIR`` (or ``TEMP``, ``TMP``), else /tmp,
    as ``tempfile`` looks first."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        if os.environ.get(name):
            return os.environ[name]
    return "/tmp"  # noqa: S108 - the system's temporary folder, as tempfile's first choice
