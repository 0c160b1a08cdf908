"""The native prefilter: every rule's loosened pattern in one Vectorscan database.

With the ``vectorscan`` extra (the ``hyperscan`` wheel), a history scan asks one
Vectorscan scan of a candidate line which rules' loosened patterns (``loosen.py``)
match in it, and tries only those rules' own expressions there: each loosened
pattern matches wherever its rule does, so no finding changes, and most of the
expressions a history would run are never run. A rule without a loosened pattern
is tried as without the prefilter; so is every line outside ASCII.

Translating and compiling a thousand patterns costs seconds, so the database is
kept in the user's cache (``$XDG_CACHE_HOME/spillguard/vectorscan/``), named by a
digest of the rules' patterns, the translation's code, Vectorscan's version and
the machine, and written atomically. A kept database is used only if its key and
its own digest check out and Vectorscan loads it; anything else (a torn or
foreign file, another CPU) is rebuilt, never trusted.

A scan must not cost more with the prefilter than without, so the caller says what
it would save (CPU-seconds, estimated from the work ahead): it is loaded only where
that is more than loading costs, and built only where it is more than building
costs (``LOAD_SECONDS``, ``BUILD_SECONDS``); a small scan imports nothing of it.
"""

from __future__ import annotations

import array
import contextlib
import functools
import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spillguard.core.usercache import user_cache

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from spillguard.core.models import Rule

#: The kept databases' file format; a change of it names every database anew.
_FORMAT = b"spillguard-vectorscan-1\n"
_DIGEST = 32
#: Databases kept in the cache at most (each rule set, Vectorscan version, machine).
_KEPT = 8
#: No pattern: the rule is tried wherever its keywords send it.
NO_PATTERN = -1
#: What the built-in catalogue's database costs a scan, in CPU-seconds (measured on
#: a 2-core x86-64 machine, docs/performance.md): loading it from the cache
#: (Vectorscan's import included), and building it (translating and compiling its
#: thousand patterns and keeping the database: 4.4 CPU-s at load 9 with the hyperscan
#: wheel 0.9.1, where 9 to 12 s were measured once). A history of 45,000 commits on
#: two workers (``SAVED_PER_COMMIT``) is worth building it for: git/git's is.
LOAD_SECONDS = 0.05
BUILD_SECONDS = 4.5


class NativeMatcher:
    """Which rules' loosened patterns match in an ASCII line, by one Vectorscan scan.

    Vectorscan allows one scan at a time in a scratch space, and a process's matcher is
    shared by its threads (a Dask worker audits several repositories at once): each
    thread scans in its own clone of the scratch. One scratch for all made a scan that
    met another fail (``ScratchInUseError``), and its repository "unreadable"."""

    __slots__ = ("_database", "_found", "_patterns", "_scratch", "_threads")

    def __init__(
        self, database: Any, rules: tuple[tuple[str, int], ...], patterns: tuple[int, ...]
    ) -> None:
        """``patterns[i]``: the pattern in the database of ``rules[i]`` (its pattern
        and flags), or NO_PATTERN."""
        import hyperscan

        self._database = database
        self._scratch = hyperscan.Scratch(database)  # cloned, never scanned in
        self._threads = threading.local()
        self._patterns = dict(zip(rules, patterns, strict=True))
        #: The patterns found in each line scanned lately: a history adds the same line
        #: again and again (two in five of git/git's candidate lines are repeats).
        self._found: dict[str, frozenset[int]] = {}

    def patterns_of(self, rules: Iterable[Rule]) -> tuple[int, ...]:
        """Each rule's pattern in the database, or NO_PATTERN: a rule the database was
        not made for (a custom rule's compiled pattern is its own), or one without a
        loosened pattern."""
        get = self._patterns.get
        return tuple(
            get((rule.regexp, rule.flags), NO_PATTERN) if rule.pattern is None else NO_PATTERN
            for rule in rules
        )

    def possible(self, line: str, rules: list[int], patterns: tuple[int, ...]) -> list[int]:
        """Those of ``rules`` (indexes into ``patterns``, of ``patterns_of``) that can
        match somewhere in ``line`` (ASCII): those whose loosened patterns match in
        it, and those without one."""
        found = self._found.get(line)
        if found is None:
            found = self._scan(line)
            if len(line) <= _REMEMBERED_LENGTH:
                if len(self._found) >= _REMEMBERED_LINES:
                    self._found.clear()
                self._found[line] = found
        return [
            index for index in rules if patterns[index] == NO_PATTERN or patterns[index] in found
        ]

    def _scan(self, line: str) -> frozenset[int]:
        """The patterns whose loosened forms match in ``line``, by one scan."""
        found: set[int] = set()
        scratch = getattr(self._threads, "scratch", None)
        if scratch is None:
            scratch = self._threads.scratch = self._scratch.clone()
        self._database.scan(
            line.encode("ascii"), match_event_handler=_add, context=found, scratch=scratch
        )
        return frozenset(found)


#: Lines remembered by ``NativeMatcher.possible``, at most, and their longest: a few
#: megabytes of a worker's memory.
_REMEMBERED_LINES = 1 << 14
_REMEMBERED_LENGTH = 200


def _add(pattern: int, _start: int, _end: int, _flags: int, found: set[int]) -> None:
    found.add(pattern)


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the databases are kept: the user's cache, as the synced rules are."""
    return user_cache(environ) / "vectorscan"


def matcher(
    rules: Sequence[tuple[str, int]], cache: Path | None, *, saving: float
) -> NativeMatcher | None:
    """The native prefilter for rules given as (pattern, flags), or None: without
    Vectorscan, when no rule has a loosened pattern, or when it would cost more than
    the ``saving`` (CPU-seconds) it brings: it is loaded from ``cache`` when that is
    more than ``LOAD_SECONDS``, built there when it is more than ``BUILD_SECONDS``.
    Made once per process for the same rules: forked workers inherit it. Made for the
    built-in catalogue, it serves every configuration of it (rules enabled or not),
    with one database."""
    key = (tuple(rules), cache)
    made = _made.get(key)
    if made is None and saving >= LOAD_SECONDS:
        made = make(*key, build=saving >= BUILD_SECONDS)
        if made is not None:
            _made[key] = made
    return made


#: The matchers this process made (or its parent, before forking), by rules and cache.
_made: dict[tuple[tuple[tuple[str, int], ...], Path | None], NativeMatcher] = {}


def make(
    rules: tuple[tuple[str, int], ...], cache: Path | None, *, build: bool = True
) -> NativeMatcher | None:
    """The matcher of ``rules``, loaded from ``cache`` (and marked as used there), else
    built (and kept there) if ``build``; as a new process makes it, without the memo."""
    hyperscan = _vectorscan()
    if hyperscan is None:
        return None
    key = _key(hyperscan, rules)
    path = None if cache is None else cache / f"{key.hex()[:32]}.hsdb"
    loaded = None if path is None else _load(hyperscan, path, key, len(rules))
    if loaded is not None:
        return NativeMatcher(loaded[0], rules, loaded[1])
    if not build:
        return None
    from spillguard.detection.loosen import loosen

    loosened = [loosen(pattern, flags) for pattern, flags in rules]
    distinct = sorted({pattern for pattern in loosened if pattern is not None})
    built = _build(hyperscan, distinct)
    if built is None:
        return None
    database, kept = built
    number = {pattern: index for index, pattern in enumerate(distinct) if index in kept}
    patterns = tuple(
        NO_PATTERN if pattern is None else number.get(pattern, NO_PATTERN) for pattern in loosened
    )
    if path is not None:
        _keep(path, key, patterns, hyperscan.dumpb(database))
    return NativeMatcher(database, rules, patterns)


@functools.cache
def _vectorscan() -> Any:
    """The ``hyperscan`` module (the ``vectorscan`` extra), or None."""
    try:
        import hyperscan
    except ImportError:
        return None
    return hyperscan


def _key(hyperscan: Any, rules: tuple[tuple[str, int], ...]) -> bytes:
    """What a database depends on: the rules, the translation, Vectorscan, the machine."""
    import platform

    from spillguard.detection import loosen

    digest = hashlib.sha256(_FORMAT)
    digest.update(f"{hyperscan.__version__}\0{platform.machine()}\0".encode())
    digest.update(_library(hyperscan))
    digest.update(Path(loosen.__file__).read_bytes())
    for pattern, flags in rules:
        digest.update(f"{flags}\0{pattern}\0".encode("utf-8", "surrogatepass"))
    return digest.digest()


@functools.cache
def _library(hyperscan: Any) -> bytes:
    """Vectorscan's library version and the CPU features it builds for, as a tiny
    database reports them."""
    probe = hyperscan.Database()
    probe.compile(expressions=[b"spillguard"], flags=[hyperscan.HS_FLAG_SINGLEMATCH])
    info: bytes = probe.info()
    return info


def _build(hyperscan: Any, patterns: list[str]) -> tuple[Any, frozenset[int]] | None:
    """The database of the patterns (ids: their indexes) and the ids it holds; those
    Vectorscan refuses (one that matches an empty line, say) are left out, found by
    halving the set that failed."""
    ids = list(range(len(patterns)))
    if not ids:
        return None
    try:
        return _compile(hyperscan, patterns, ids), frozenset(ids)
    except hyperscan.error:
        kept = _compilable(hyperscan, ids, patterns)
    if not kept:
        return None
    return _compile(hyperscan, patterns, kept), frozenset(kept)


def _compile(hyperscan: Any, patterns: list[str], ids: list[int]) -> Any:
    # One report per pattern and scan: a line's scan says which patterns match, not
    # where or how often. Prefilter mode lets Vectorscan loosen what it cannot build
    # exactly (large bounded repeats), never the other way.
    flags = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_PREFILTER
    database = hyperscan.Database()
    database.compile(
        expressions=[patterns[index].encode("ascii") for index in ids],
        ids=ids,
        flags=[flags] * len(ids),
    )
    return database


def _compilable(hyperscan: Any, ids: list[int], patterns: list[str]) -> list[int]:
    """The ids among ``ids`` whose patterns Vectorscan compiles, each half of a set
    that fails tried on its own (a refused pattern is rare: a few compiles more)."""
    try:
        _compile(hyperscan, patterns, ids)
    except hyperscan.error:
        if len(ids) == 1:
            return []
        middle = len(ids) // 2
        return _compilable(hyperscan, ids[:middle], patterns) + _compilable(
            hyperscan, ids[middle:], patterns
        )
    return ids


def _load(hyperscan: Any, path: Path, key: bytes, rules: int) -> tuple[Any, tuple[int, ...]] | None:
    """A kept database and the patterns of its ``rules`` rules, if its key and digest
    check out and Vectorscan loads it."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_FORMAT)
    if data[:head] != _FORMAT or data[head : head + _DIGEST] != key:
        return None
    body = memoryview(data)[head + 2 * _DIGEST :]
    if hashlib.sha256(body).digest() != data[head + _DIGEST : head + 2 * _DIGEST]:
        return None
    patterns = array.array("i")
    count = int.from_bytes(body[:4], "little")
    end = 4 + patterns.itemsize * count
    if count != rules or end > len(body):
        return None
    patterns.frombytes(body[4:end])
    try:
        database = hyperscan.loadb(bytes(body[end:]), hyperscan.HS_MODE_BLOCK)
    except hyperscan.error:
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # used: pruning keeps the databases used last
    return database, tuple(patterns)


def _keep(path: Path, key: bytes, patterns: tuple[int, ...], serialized: bytes) -> None:
    """Write the database for later scans, atomically; never fail a scan for it."""
    numbers = array.array("i", patterns)
    body = len(numbers).to_bytes(4, "little") + numbers.tobytes() + serialized
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial.write_bytes(_FORMAT + key + hashlib.sha256(body).digest() + body)
        partial.replace(path)
        _prune(path.parent)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _prune(folder: Path) -> None:
    """Keep the databases written or used last only (older rules, older versions)."""
    kept = sorted(folder.glob("*.hsdb"), key=lambda entry: entry.stat().st_mtime, reverse=True)
    for old in kept[_KEPT:]:
        old.unlink(missing_ok=True)
