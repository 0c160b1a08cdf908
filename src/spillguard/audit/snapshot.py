"""What decides a repository's audit, read without opening it: its refs and its configuration.

Opening a repository with libgit2, loading its configuration and taking the rules'
fingerprint cost about 2.6 CPU-ms: over ten thousand repositories where nothing
changed, 26 CPU-s, the whole re-run. A snapshot is a SHA-256 of what those steps read:

- what the whole audit shares (``_salt``): the code and built-in rules that make a
  configuration and its fingerprint, the ``--config`` file, ``--branches``;
- the repository's own files, as bytes: ``HEAD``, ``packed-refs``, every loose branch
  (``refs/heads``), and the files its configuration is loaded from
  (``server_config_files``); its ``.spillguard.toml`` is on the default branch, which
  ``HEAD`` and the refs name.

Bytes, not times or sizes: an administrator's editor may rewrite a file within one
tick of the clock, to the same size. Only what decides the outcome is read (not git's
``config``, which no branch's findings depend on): on a machine that drops the page
cache of idle files, each file read is a disk read.

A repository whose snapshot is the one remembered with its last outcome is current,
and is not opened. One that this does not read exactly (no git directory of its own,
a linked work tree, reftable refs, a branch that is a link or a symbolic ref) has no
snapshot, and is judged the usual way every time. Objects are not read: a repository
whose refs are unchanged but whose objects were deleted stays current until its refs
move.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

#: What ``HEAD`` holds in a repository whose refs are in a reftable (git 2.45+).
_REFTABLE_HEAD = b"ref: refs/heads/.invalid\n"


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as file:  # noqa: PTH123 - ten thousand times: no Path
            return file.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _part(data: bytes | None) -> bytes:
    """``data``, or its absence, framed so that no two sequences of files digest alike."""
    return b"-" if data is None else b"%d:%s" % (len(data), data)


def reader(
    *, config_path: str | None, branches: str | None, environ: Mapping[str, str]
) -> Callable[[str], str | None]:
    """The snapshot of the repository at a path, as this audit takes it."""
    salt = _salt(config_path=config_path, branches=branches, environ=environ)
    return lambda path: snapshot(path, salt, config_path=config_path, environ=environ)


def _code() -> list[Path]:
    """The files a configuration's fingerprint is made by: the configuration package
    (its code and built-in rules), the models it fills and the fingerprint itself."""
    from spillguard import configuration
    from spillguard.audit import fingerprint
    from spillguard.configuration.rules import builtin_sources
    from spillguard.core import models

    package = Path(configuration.__file__).parent
    return [*sorted(package.rglob("*.py")), *builtin_sources(), Path(models.__file__),
            Path(fingerprint.__file__)]  # fmt: skip


def _salt(*, config_path: str | None, branches: str | None, environ: Mapping[str, str]) -> bytes:
    """What every repository's snapshot shares in this audit."""
    texts = (config_path, branches, environ.get("GIT_DIR"), environ.get("GIT_COMMON_DIR"))
    parts = [_part(None if text is None else os.fsencode(text)) for text in texts]
    parts.extend(_part(path.read_bytes()) for path in _code())
    parts.append(_part(None if config_path is None else _admin_file(config_path)))
    return hashlib.sha256(b"".join(parts)).digest()


def _admin_file(path: str) -> bytes | None:
    try:
        return _read(path)
    except OSError:  # a folder, unreadable: every repository fails to load it, and says so
        return None


def _git_dir(path: str) -> tuple[str, dict[str, os.DirEntry[str]]] | None:
    """The repository's git directory and its entries (one listing, no lookups), when
    it holds its own refs; else None."""
    for git_dir in (path, f"{path}/.git"):
        try:
            with os.scandir(git_dir) as listing:
                entries = {entry.name: entry for entry in listing}
        except (FileNotFoundError, NotADirectoryError):
            return None
        head, objects = entries.get("HEAD"), entries.get("objects")
        if head is not None and head.is_file():
            if objects is None or not objects.is_dir() or "commondir" in entries:
                return None  # not a repository libgit2 opens here, or a linked work tree
            return git_dir, entries
    return None


def _loose(folder: str, parts: list[bytes]) -> bool:
    """The loose refs under ``folder``, by name, added to ``parts``; False where one
    is not a plain file naming a commit."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except FileNotFoundError:
        return True
    for entry in entries:
        if entry.is_symlink():
            return False
        if entry.is_dir():
            parts.append(_part(os.fsencode(entry.name) + b"/"))
            if not _loose(entry.path, parts):
                return False
            continue
        data = _read(entry.path) if entry.is_file() else None  # never open a pipe
        if data is None or data.startswith(b"ref:"):
            return False  # gone meanwhile, or a symbolic ref: its target may lie elsewhere
        parts.extend((_part(os.fsencode(entry.name)), _part(data)))
    parts.append(_part(b""))  # the end of this folder
    return True


def snapshot(
    path: str, salt: bytes, *, config_path: str | None, environ: Mapping[str, str]
) -> str | None:
    """The snapshot of the repository at ``path``, None when it has none (a file it
    cannot read, too: opening the repository says why)."""
    try:
        return _taken(path, salt, config_path=config_path, environ=environ)
    except OSError:
        return None


def _taken(
    path: str, salt: bytes, *, config_path: str | None, environ: Mapping[str, str]
) -> str | None:
    from spillguard.configuration.loading import server_config_files

    found = _git_dir(path)
    if found is None:
        return None
    git_dir, entries = found
    head = _read(entries["HEAD"].path)
    if head is None or head == _REFTABLE_HEAD:
        return None
    packed = _read(entry.path) if (entry := entries.get("packed-refs")) else None
    parts = [salt, _part(head), _part(packed)]
    if not _loose(f"{git_dir}/refs/heads", parts):
        return None
    for name in server_config_files(git_dir, config_path, environ):
        inside = name.removeprefix(f"{git_dir}/")
        listed = inside == name or inside.split("/", 1)[0] in entries  # else absent: not opened
        parts.append(_part(_read(name) if listed else None))
    return hashlib.sha256(b"".join(parts)).hexdigest()
