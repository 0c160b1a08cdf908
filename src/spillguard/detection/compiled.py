"""Rules' compiled patterns, kept between processes.

``regex`` compiles a pattern in two steps: its parser and optimiser, written in
Python, turn the pattern into code for its engine, and its C module
(``regex._regex.compile``) makes the pattern object from that code. The first step
is nearly all the cost: 1.35 CPU-s for the thousand built-in rules, 1 to 10 ms for a
generic rule, paid again by every process for each rule it meets. A commit or push
whose change holds a keyword spent more compiling than on anything else (the three
generic rules a one-commit push of the bench met: 67 of its 187 ms); each worker of
a history scan, a few hundred milliseconds.

So a compiled pattern is kept as regex pickles it (``copyreg``: the engine's call
and the code its compiler made), a file per pattern, in the user's cache
(``$XDG_CACHE_HOME/spillguard/regex/<engine>-<Python>-<regex's files>/``), and a
later process makes the same pattern object from it in microseconds, as unpickling
it would: the thousand built-in rules in 0.05 CPU-s. The files hold data only
(``marshal``, no pickle: nothing in them is ever called), and a file is used only
where it names the same pattern and flags and the engine takes it; anything else (a
torn, foreign or missing file) is compiled as before and written again. Only a
folder of the user's own that no one else may write is read. The same folder keeps
verdicts that depend on a key alone (``remember``): a custom rule found sound.
"""

from __future__ import annotations

import binascii
import contextlib
import copyreg
import functools
import marshal
import os
import sys
import threading
from pathlib import Path

from spillguard.core.usercache import user_cache

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType
    from typing import Any

    import regex


#: A file's first bytes: a CRC-32 of the rest.
_DIGEST = 4
#: Folders of other regex or Python versions kept (two virtual environments may share
#: the user's cache), the newest first.
_KEPT_VERSIONS = 4


def compile_kept(pattern: str, flags: int, folder: Path | None) -> regex.Pattern[str]:
    """``regex.compile(pattern, flags)``, made from ``folder``'s file of it where one is
    kept (and kept there after compiling, where none is); ``folder`` None: compiled.
    regex itself is imported only to compile."""
    if folder is not None:
        made = _load(_pattern_path(folder, pattern, flags), pattern, int(flags))
        if made is not None:
            return made
    import regex

    compiled = regex.compile(pattern, flags)
    keep(compiled, flags, folder)
    return compiled


def compiled_pattern(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """``compile_kept`` in this process's cache folder (``cache_folder``)."""
    return compile_kept(pattern, flags, cache_folder())


def keep(compiled: regex.Pattern[str], flags: int, folder: Path | None) -> None:
    """Keep a pattern compiled with ``flags`` in ``folder`` for later processes, as
    regex would pickle it: the arguments of the engine's call that makes it again
    (nothing, where regex pickles it otherwise)."""
    reduce = copyreg.dispatch_table.get(type(compiled))
    reduced = reduce(compiled) if reduce is not None else None
    if folder is None or not isinstance(reduced, tuple) or len(reduced) != 2:
        return
    if reduced[0] is _engine().compile:
        pattern = compiled.pattern
        _keep(_pattern_path(folder, pattern, flags), (pattern, int(flags)), tuple(reduced[1]))


def _pattern_path(folder: Path, pattern: str, flags: int) -> Path:
    # re's and regex's flags are enums: kept as the number they are
    return _path(folder, "p", (int(flags), pattern))


@functools.cache
def cache_folder() -> Path | None:
    """``folder_in`` this process's environment, looked up once."""
    return folder_in(os.environ)


def folder_in(environ: Mapping[str, str]) -> Path | None:
    """Where the compiled patterns of this regex and this Python are kept; None where
    ``SPILLGUARD_REGEX_CACHE=0`` asks for none, or where regex's files are not on the
    file system for this module to find (a frozen or zipped application): then
    every pattern is compiled."""
    if environ.get("SPILLGUARD_REGEX_CACHE") == "0":
        return None
    try:
        found = [(path, path.stat()) for path in _installed()]
        magic = _engine().MAGIC
    except (ImportError, OSError):
        return None
    stamps = ":".join(f"{path}:{stat.st_size}:{stat.st_mtime_ns}" for path, stat in found)
    version = binascii.crc32(stamps.encode())
    name = f"{magic}-{sys.implementation.cache_tag}-{version:08x}"
    return user_cache(environ) / "regex" / name


@functools.cache
def _installed() -> tuple[Path, Path]:
    """regex's C module and its compiler (``_regex_core.py``), as installed, found
    without importing regex: a reinstall or another version of either names another
    folder."""
    from importlib.machinery import PathFinder

    package = PathFinder.find_spec("regex")
    where = None if package is None else package.submodule_search_locations
    engine = None if where is None else PathFinder.find_spec("regex._regex", where)
    if package is None or package.origin is None or engine is None or engine.origin is None:
        raise ImportError("regex is not installed")  # as importing it would say
    return Path(engine.origin), Path(package.origin).with_name("_regex_core.py")


def _engine() -> ModuleType:
    """regex's C module, which makes pattern objects from its compiler's code: loaded
    on its own where regex is not imported yet. Importing regex runs its compiler's
    4,000 lines of Python (~60 M instructions, a fifth of a one-commit push); a pattern
    made from its kept file needs only the engine, which imports the rest itself if it
    ever raises regex's own error."""
    loaded = sys.modules.get("regex._regex")
    if loaded is not None:
        return loaded
    from importlib.machinery import ExtensionFileLoader, ModuleSpec

    origin = str(_installed()[0])
    spec = ModuleSpec("regex._regex", ExtensionFileLoader("regex._regex", origin), origin=origin)
    assert spec.loader is not None  # noqa: S101 - given just above
    module = spec.loader.create_module(spec)
    assert module is not None  # noqa: S101 - an extension's loader makes its module
    spec.loader.exec_module(module)
    return sys.modules.setdefault("regex._regex", module)


def _load(path: Path, pattern: str, flags: int) -> regex.Pattern[str] | None:
    arguments = _read(path, pattern, flags) if _private(path.parent) else None
    if arguments is None:
        return None
    try:
        made: regex.Pattern[str] = _engine().compile(*arguments)
    except (TypeError, ValueError, RuntimeError, IndexError, OverflowError):
        return None
    if type(made) not in copyreg.dispatch_table:  # regex not imported: it registers its own
        copyreg.pickle(type(made), _pickled)
    return made if made.pattern == pattern else None


def _pickled(pattern: regex.Pattern[str]) -> tuple[Any, ...]:
    """How a pattern made from its file, with regex not imported, pickles: as regex
    pickles it (importing regex registers its own way, which this hands over to)."""
    import regex  # noqa: F401 - for its pickling of patterns, registered on import

    reduced: tuple[Any, ...] = copyreg.dispatch_table[type(pattern)](pattern)  # type: ignore[assignment]
    return reduced


def _read(path: Path, pattern: str, flags: int) -> tuple[Any, ...] | None:
    """The engine's arguments kept in ``path`` for the pattern, if it holds them whole."""
    arguments = _record(path, (pattern, flags))
    return arguments if isinstance(arguments, tuple) else None


def _record(path: Path, key: tuple[Any, ...]) -> object:
    """What ``path`` holds for ``key``, if it holds a whole record of it; else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    # A checksum of the rest first: the engine would take a code changed after it was
    # written and match something else.
    body = data[_DIGEST:]
    if data[:_DIGEST] != binascii.crc32(body).to_bytes(_DIGEST, "little"):
        return None
    try:
        kept = marshal.loads(body)  # noqa: S302 - data, never called; a private folder
    except (ValueError, EOFError, TypeError):
        return None
    # Another key with the same checksum of its name, or no file of ours:
    if not (isinstance(kept, tuple) and len(kept) == 2 and kept[0] == key):
        return None
    return kept[1]


def recalled(key: tuple[str, ...], folder: Path | None) -> object:
    """What ``remember`` kept for ``key`` (plain data) in ``folder``, or None: a verdict
    that depends on the key alone, such as a custom rule found sound
    (``rulecheck``)."""
    if folder is None:
        return None
    return _record(_path(folder, "v", key), key) if _private(folder) else None


def remember(key: tuple[str, ...], value: Any, folder: Path | None) -> None:
    """Keep ``value`` for ``key`` in ``folder`` for later processes (``recalled``)."""
    if folder is not None:
        _keep(_path(folder, "v", key), key, value)


def _path(folder: Path, kind: str, key: tuple[object, ...]) -> Path:
    named = "\0".join(map(str, key)).encode("utf-8", "surrogatepass")
    return folder / f"{kind}{binascii.crc32(named):08x}"


def _private(folder: Path) -> bool:
    """Whether ``folder`` is this user's and no one else may write in it (on Windows,
    where a user's profile folders are the user's own, whether it exists). Asked once
    per folder that is, and again for one that is not: this process may make it."""
    if folder in _PRIVATE:
        return True
    try:
        found = folder.stat()
    except OSError:
        return False
    getuid = getattr(os, "getuid", None)
    private = getuid is None or (found.st_uid == getuid() and not found.st_mode & 0o022)
    if private:
        _PRIVATE.add(folder)
    return private


#: The folders ``_private`` found to be.
_PRIVATE: set[Path] = set()


def _keep(path: Path, key: tuple[Any, ...], value: Any) -> None:
    """Write the record of ``key`` for later processes, atomically; never fail a scan
    for it."""
    try:
        body = marshal.dumps((key, value))
    except ValueError:  # not plain data: made again each time
        return
    data = binascii.crc32(body).to_bytes(_DIGEST, "little") + body
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        _make_folder(path.parent)
        # Never through a link planted where the partial file goes (Windows has no
        # O_NOFOLLOW; O_EXCL refuses a link there too).
        exclusive = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        handle = os.open(partial, exclusive, 0o600)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        partial.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _make_folder(folder: Path) -> None:
    """The version's folder, made private; other versions' beyond the last few go."""
    if folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, mode=0o700)
    except FileExistsError:
        return  # another process or thread made it just now, and prunes
    versions = sorted(
        (other for other in folder.parent.iterdir() if other.is_dir()),
        key=lambda other: other.stat().st_mtime,
        reverse=True,
    )
    if len(versions) > _KEPT_VERSIONS:
        import shutil  # here: a process with its patterns kept never needs it

        for old in versions[_KEPT_VERSIONS:]:
            shutil.rmtree(old, ignore_errors=True)
