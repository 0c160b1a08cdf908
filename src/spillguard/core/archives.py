"""Small compressed files opened as their readers open them: gzip, zip and every format
built on zip (jar, war, apk, docx, xlsx, pptx, odt...), within hard limits.

A secret in a compressed file is as readable as in plain text to anyone who unpacks
it, and its bytes show nothing. Each member is judged as a file of its own, at the
path ``archive.zip!inner/file`` (as ``jar:`` URLs and gitleaks name them; a member of a
member is ``a.zip!b.jar!c.properties``). An archive is known by its first bytes, not
its name. A bomb must not stall a hook: at most ``MAX_MEMBERS`` members, ``MAX_DEPTH``
archives deep, no member larger than the size limit, all of them together at most
``MAX_TOTAL`` bytes and ``MAX_RATIO`` times the archive's size (every read stops at its
bound, whatever the archive's headers claim). What cannot be opened within them, an
encrypted member, or a damaged archive is ``Unopenable``: its content is not judged,
and the administrator's ``on_unscannable`` decides, as for a binary over the limit.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    import zipfile

#: The most members an archive (and the archives in it, together) may have.
MAX_MEMBERS = 1000
#: How many archives deep members are opened (a jar in a war in a zip: 3).
MAX_DEPTH = 3
#: The most bytes all members together may unpack to.
MAX_TOTAL = 64 << 20
#: The most an archive may unpack to, as a multiple of its size (zip bombs reach
#: thousands); below ``_SMALL`` bytes unpacked, any ratio (a few kilobytes of text).
MAX_RATIO = 100
_SMALL = 1 << 20
#: Where a member's path is joined to its archive's.
SEPARATOR = "!"

#: Why an archive's members are not judged (each ``Unopenable.reason``).
OVER_LIMITS = "archive over its limits"
ENCRYPTED = "encrypted archive"
DAMAGED = "damaged archive"
UNOPENABLE = frozenset({OVER_LIMITS, ENCRYPTED, DAMAGED})

_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP = b"\x1f\x8b"


class Member:
    """A file inside an archive: its path inside it, and its content (a plain class:
    a NamedTuple would cost a hook's start-up more to define)."""

    __slots__ = ("data", "path")

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data

    def __repr__(self) -> str:
        return f"Member({self.path!r}, {len(self.data)} bytes)"


class Unopenable(Exception):  # noqa: N818 - a verdict, as decode's reasons are
    """An archive whose members cannot be read within the limits; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def is_archive(data: bytes) -> bool:
    """Whether ``data`` starts as a zip or a gzip file does."""
    return data.startswith(_ZIP) or data.startswith(_GZIP)


def opened(path: str, data: bytes, *, max_size: int) -> list[Member] | str:
    """The files a blob at ``path`` is judged as: itself, or, for an archive, each of
    its members at ``path!member``; or why an archive's members cannot be judged."""
    if not is_archive(data):
        return [Member(path, data)]
    try:
        found = members(data, path, max_size=max_size)
    except Unopenable as error:
        return error.reason
    return [Member(f"{path}{SEPARATOR}{member.path}", member.data) for member in found]


def members(data: bytes, name: str, *, max_size: int) -> list[Member]:
    """Every file in the archive ``data`` (called ``name``, for a gzip member's name)
    and in the archives inside it, each at its path joined by ``SEPARATOR``; raises
    Unopenable past a limit (``max_size``: the most one member may be)."""
    budget = _Budget(len(data), max_size)
    return _members(data, name, budget, depth=1)


class _Budget:
    """What is left to unpack of an archive and its members together."""

    def __init__(self, size: int, max_size: int) -> None:
        self.max_size = max_size
        self.members = 0
        self.left = min(MAX_TOTAL, max(_SMALL, size * MAX_RATIO))

    def take(self, size: int) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise Unopenable(OVER_LIMITS)
        if size > self.max_size:
            raise Unopenable(OVER_LIMITS)
        self.left -= size
        if self.left < 0:
            raise Unopenable(OVER_LIMITS)

    def bound(self) -> int:
        """The most bytes the next member may unpack to before a limit is passed."""
        return min(self.max_size, self.left) + 1


def _members(data: bytes, name: str, budget: _Budget, *, depth: int) -> list[Member]:
    found = []
    for member in _unpacked(data, name, budget):
        if is_archive(member.data) and depth < MAX_DEPTH:
            inner = _members(member.data, member.path, budget, depth=depth + 1)
            found += [Member(f"{member.path}{SEPARATOR}{each.path}", each.data) for each in inner]
        elif is_archive(member.data):
            raise Unopenable(OVER_LIMITS)
        else:
            found.append(member)
    return found


def _unpacked(data: bytes, name: str, budget: _Budget) -> list[Member]:
    if data.startswith(_GZIP):
        return [Member(_gzip_name(data, name), _gunzip(data, budget))]
    # Here: a hook meets an archive rarely, and zipfile costs its start-up milliseconds.
    import io
    import zipfile

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise Unopenable(DAMAGED) from None
    if len(infos) > MAX_MEMBERS:
        raise Unopenable(OVER_LIMITS)
    found = []
    for info in infos:
        if info.is_dir():
            continue
        if info.flag_bits & 0x1:
            raise Unopenable(ENCRYPTED)
        found.append(Member(info.filename, _read_member(archive, info, budget)))
    return found


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> bytes:
    """The member's bytes, read no further than the budget allows."""
    import zipfile

    try:
        with archive.open(info) as member:
            content = member.read(budget.bound())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        raise Unopenable(DAMAGED) from None
    budget.take(len(content))
    return content


def _gunzip(data: bytes, budget: _Budget) -> bytes:
    """A gzip file's content (its members one after the other, as gunzip writes them),
    unpacked no further than the budget allows."""
    import zlib

    content = bytearray()
    rest = data
    while rest.startswith(_GZIP):
        reading = zlib.decompressobj(16 + zlib.MAX_WBITS)
        bound = budget.bound()
        try:
            content += reading.decompress(rest, bound - len(content))
        except zlib.error:
            raise Unopenable(DAMAGED) from None
        if reading.unconsumed_tail or len(content) >= bound:
            budget.take(bound)  # stopped at the bound, not at the end: past a limit
        rest = reading.unused_data
    budget.take(len(content))
    return bytes(content)


def _gzip_name(data: bytes, name: str) -> str:
    """The name gzip stored (``FNAME``), else the archive's own without ``.gz``."""
    flags = data[3] if len(data) > 3 else 0  # the header's flag byte
    if flags & 0x08 and not flags & 0x04:  # a name, and no extra field before it
        end = data.find(b"\0", 10)
        if end > 10:  # past the fixed header
            return data[10:end].decode("latin-1")
    base = name.rsplit(SEPARATOR, 1)[-1].rsplit("/", 1)[-1]
    for suffix in (".tgz", ".gz"):
        if base.endswith(suffix):
            return base[: -len(suffix)] + (".tar" if suffix == ".tgz" else "")
    return base or "content"
