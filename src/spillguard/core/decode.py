"""Bytes to text for scanning: binary detection and tolerant decoding."""

from __future__ import annotations

import codecs
import functools
import re

from spillguard.core.archives import UNOPENABLE, opened
from spillguard.core.models import Skipped

#: Bytes sniffed for a NUL to call content binary (git's own heuristic uses 8000).
SNIFF_BYTES = 8000


# An LFS pointer is a tiny text file; the content it points at is not in git. Only
# the exact format git-lfs writes counts (version, extensions, oid, size, in that
# order): a header alone would let any file that starts with it go unscanned.
_LFS_HEADER = b"version https://git-lfs.github.com/spec/v1\n"
_LFS_BODY = rb"(?:ext-\d+-[a-z0-9]+ sha256:[0-9a-f]{64}\n)*oid sha256:[0-9a-f]{64}\nsize \d+\n?"
#: git-lfs never reads a blob this large or larger as a pointer (its blobSizeCutoff);
#: history scans rely on it to judge big blobs without reading them twice.
LFS_POINTER_LIMIT = 1024


def is_lfs_pointer(data: bytes) -> bool:
    if len(data) >= LFS_POINTER_LIMIT or not data.startswith(_LFS_HEADER):
        return False
    return _lfs_body().fullmatch(data, len(_LFS_HEADER)) is not None


@functools.cache
def _lfs_body() -> re.Pattern[bytes]:
    """Compiled on first use: hooks start without it unless a pointer turns up."""
    return re.compile(_LFS_BODY)


# Longest first: the UTF-32 little-endian mark starts with the UTF-16 one.
_WIDE_MARKS = (
    (b"\xff\xfe\0\0", "utf-32"),
    (b"\0\0\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
#: Every mark, for one test that settles the common case (none) in one call.
_ANY_WIDE_MARK = tuple(mark for mark, _ in _WIDE_MARKS)


def marked_encoding(data: bytes) -> str | None:
    """The codec of text that starts with a UTF-16 or UTF-32 byte order mark, else None."""
    if not data.startswith(_ANY_WIDE_MARK):
        return None  # most text: one call (this runs on every fragment a diff yields)
    for mark, codec in _WIDE_MARKS:
        if data.startswith(mark):
            return codec
    return None


def wide_encoding(data: bytes) -> str | None:
    """The codec of UTF-16 or UTF-32 text, marked by a byte order mark or not, else None.

    Such text is full of NULs, yet it is text an editor shows (Windows' tools write
    UTF-16 without a mark too): read as binary, it would hide whatever secret it holds.
    Without a mark, text is UTF-16 or UTF-32 when its first bytes decode so, in
    either byte order, to characters that are neither NUL nor other controls (a
    binary's bytes do not: two NULs in a row, a control character, a lone surrogate),
    half of them ASCII at least. Other such text (CJK, say) is read as a binary, whose
    printable runs include UTF-16 and UTF-32 ones: its ASCII secrets are found there.
    """
    marked = marked_encoding(data)
    if marked is not None or b"\0" not in data[:SNIFF_BYTES]:
        return marked
    return unmarked_encoding(data[:SNIFF_BYTES])


#: Without a byte order mark, by the byte order its NULs tell: the wider codec first
#: (UTF-32's ``a\0\0\0`` reads as UTF-16 too, with NULs between its letters).
_UNMARKED = {"le": ("utf-32-le", "utf-16-le"), "be": ("utf-32-be", "utf-16-be")}


def unmarked_encoding(head: bytes) -> str | None:
    """The codec that reads ``head`` (a blob's first bytes) as UTF-16 or UTF-32 text.

    Which byte order is tried first is where the NULs stand: ASCII in UTF-16LE has its
    NULs at odd offsets, in UTF-16BE at even ones (the other order reads as CJK)."""
    little = head[1::2].count(0) >= head[0::2].count(0)
    orders = ("le", "be") if little else ("be", "le")
    for codec in (*_UNMARKED[orders[0]], *_UNMARKED[orders[1]]):
        # Incremental: the head may end inside a character (a surrogate pair).
        reading = codecs.getincrementaldecoder(codec)("strict")
        try:
            text = reading.decode(head, final=False)
        except UnicodeDecodeError:
            continue
        if text and not _control().search(text) and _mostly_ascii(text):
            return codec
    return None


def _mostly_ascii(text: str) -> bool:
    return len(text.encode("ascii", "ignore")) * 2 >= len(text)


@functools.cache
def _control() -> re.Pattern[str]:
    """A character no text holds: NUL and the other C0 controls but tab, newlines, form
    feed and escape; DEL and the C1 controls; noncharacters."""
    return re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffe\uffff]")


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:SNIFF_BYTES] and wide_encoding(data) is None


def as_utf8(data: bytes) -> bytes:
    """Text with a UTF-16/32 byte order mark as UTF-8 (so lines split where the text's
    do); anything else as it is."""
    codec = wide_encoding(data)
    return data if codec is None else data.decode(codec, "replace").encode()


def decode(data: bytes, *, start: bool = True) -> str:
    """Bytes as text: UTF-8, else Latin-1, so every ASCII secret is still found.

    Never UTF-16/32, whatever the first bytes: a byte order mark counts only at the
    start of a whole blob (``readings``), and a run of added lines that begins with
    one is the blob's bytes like any other run. ``start``: the bytes begin the blob,
    where a UTF-8 mark is dropped (as "utf-8-sig" reads it).
    """
    try:
        text = data.decode("utf-8")  # the C codec: "utf-8-sig" is a Python wrapper
    except UnicodeDecodeError:
        return data.decode("latin-1")
    return text.removeprefix("\ufeff") if start else text


def readings(data: bytes) -> tuple[str, ...]:
    """The texts a whole blob is judged as: a binary's printable runs; UTF-16/32 text
    decoded, and always its bytes too: as ``decode`` reads them after a byte order
    mark, as a binary's printable runs without one. Neither settles it alone: a
    pusher can put ``FF FE`` before plain text, which then decodes to unreadable
    characters, or NULs between ASCII letters that read as UTF-16 too."""
    if is_binary(data):
        return (printable_text(data),)
    codec = wide_encoding(data)
    if codec is None:
        return (decode(data),)
    # A malformed unit (an odd last byte) must not stop the scan of the rest.
    decoded = data.decode(codec, "replace")
    return decoded, decode(data) if marked_encoding(data) else printable_text(data, wide=False)


def judged_as(path: str, data: bytes, max_size: int) -> tuple[list[tuple[str, str]], str | None]:
    """The (path, text) pairs a whole blob at ``path`` is judged as: its ``readings``,
    or an archive's members' at ``path!member`` (``archives.opened``); and why an
    archive's members cannot be judged (then its own bytes are), else None."""
    found = opened(path, data, max_size=max_size)
    if isinstance(found, str):
        return [(path, text) for text in readings(data)], found
    return [(member.path, text) for member in found for text in readings(member.data)], None


#: Why a blob is not read: a binary larger than ``max_file_size``, whose printable
#: runs are not searched (the administrator's ``on_unscannable`` decides).
LARGE_BINARY = "binary over max_file_size"
#: The shortest run of printable ASCII searched in binary content (``strings`` takes
#: 4): shorter runs are noise in compressed data, and no secret is that short.
MIN_RUN = 8
_RUN = rb"[\t\x20-\x7e]{%d,}" % MIN_RUN
#: A run as ``strings -e l|b|L|B`` finds it: UTF-16 or UTF-32 text (Windows resources,
#: .NET strings, documents), from a NUL on (a search in C skips to each), the printable
#: byte before it taken in Python (the little-endian first character).
_WIDE_RUN = rb"\x00(?:(?:[\t\x20-\x7e]\x00){%d,}|\x00\x00(?:[\t\x20-\x7e]\x00\x00\x00){%d,})" % (
    MIN_RUN - 1,
    MIN_RUN - 1,
)
_PRINTABLE = frozenset(b"\t" + bytes(range(0x20, 0x7F)))

#: A run of printable text in binary content: its line (one more than the newline
#: bytes before it) and its bytes.
Run = tuple[int, bytes]


@functools.cache
def _run() -> re.Pattern[bytes]:
    return re.compile(_RUN)


@functools.cache
def _wide_run() -> re.Pattern[bytes]:
    return re.compile(_WIDE_RUN)


def printable_runs(data: bytes, *, wide: bool = True) -> list[Run]:
    """Every run of ``MIN_RUN`` or more printable ASCII characters (and tabs) in
    ``data``, as ``strings`` lists them, and as ``strings -e`` lists UTF-16 and UTF-32
    ones (given as ASCII) unless not ``wide`` (text read decoded already), each with
    its line: a text file that a NUL makes binary keeps its line numbers. A pass of
    a regular expression in C for each kind."""
    found = [(match.start(), match.group()) for match in _run().finditer(data)]
    if wide and b"\0" in data:
        found += _wide_runs(data)
        found.sort()
    runs = []
    line, at = 1, 0
    for start, run in found:
        line += data.count(b"\n", at, start)
        at = start
        runs.append((line, run))
    return runs


def _wide_runs(data: bytes) -> list[tuple[int, bytes]]:
    """The UTF-16 and UTF-32 runs, each where it starts and as ASCII."""
    found = []
    for match in _wide_run().finditer(data):
        start, end = match.span()
        if start and data[start - 1] in _PRINTABLE:
            start -= 1  # little-endian: its first character stands before the NUL
        elif end < len(data) and data[end] in _PRINTABLE:
            end += 1  # big-endian: its last character stands after the last NUL
        found.append((start, data[start:end].replace(b"\0", b"")))
    return found


def runs_by_line(runs: list[Run], known: frozenset[bytes] = frozenset()) -> dict[int, bytes]:
    """The runs not in ``known``, by line. Runs that share a line are put on lines of
    their own (a match must not join two strings a non-printable byte kept apart), so
    in a binary the line numbers of what follows them run ahead; a text file with a
    NUL keeps its lines, one run each."""
    grouped: dict[int, list[bytes]] = {}
    for line, run in runs:
        if run not in known:
            grouped.setdefault(line, []).append(run)
    return {line: b"\n".join(parts) + b"\n" for line, parts in grouped.items()}


def printable_text(data: bytes, *, wide: bool = True) -> str:
    """A binary blob as the text it is judged as: its printable runs on their lines
    (``printable_runs``)."""
    lines = runs_by_line(printable_runs(data, wide=wide))
    if not lines:
        return ""
    return "".join(lines.get(number, b"\n").decode("ascii") for number in range(1, max(lines) + 1))


def unread_reason(data: bytes, max_size: int) -> str | None:
    """Why a blob's content is not judged (a binary over ``max_size``, an LFS pointer),
    or None. Text of any size is judged, and a binary's printable runs."""
    if len(data) > max_size and is_binary(data):
        return LARGE_BINARY
    if is_lfs_pointer(data):
        return "LFS pointer"
    return None


def skipped(path: str, reason: str, commit: str | None = None) -> Skipped:
    """The Skipped item for ``reason``: unjudged when it left content unread (a binary
    over the size limit, an archive that cannot be opened within its limits)."""
    unjudged = reason == LARGE_BINARY or reason in UNOPENABLE
    return Skipped(path=path, reason=reason, commit=commit, unjudged=unjudged)
