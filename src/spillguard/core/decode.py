"""Bytes to text for scanning: binary detection and tolerant decoding."""

from __future__ import annotations

import functools
import re

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


def wide_encoding(data: bytes) -> str | None:
    """The codec of text that starts with a UTF-16 or UTF-32 byte order mark, else None.

    Such text is full of NULs, yet it is text an editor shows: read as binary, it
    would hide whatever secret it holds.
    """
    if not data.startswith(_ANY_WIDE_MARK):
        return None  # most text: one call (this runs on every fragment a diff yields)
    for mark, codec in _WIDE_MARKS:
        if data.startswith(mark):
            return codec
    return None


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
    """The texts a whole blob is judged as: a binary's printable runs; text's UTF-16/32
    decoding after a byte order mark, and always its bytes as ``decode`` reads them.
    The mark alone proves nothing (a pusher can put ``FF FE`` before plain text, which
    then decodes to unreadable characters), so the bytes are read too; the decoding of
    real UTF-16/32 text is where its secrets show."""
    if is_binary(data):
        return (printable_text(data),)
    codec = wide_encoding(data)
    if codec is None:
        return (decode(data),)
    # A malformed unit (an odd last byte) must not stop the scan of the rest.
    return data.decode(codec, "replace"), decode(data)


#: Why a blob is not read: a binary larger than ``max_file_size``, whose printable
#: runs are not searched (the administrator's ``on_unscannable`` decides).
LARGE_BINARY = "binary over max_file_size"
#: The shortest run of printable ASCII searched in binary content (``strings`` takes
#: 4): shorter runs are noise in compressed data, and no secret is that short.
MIN_RUN = 8
_RUN = rb"[\t\x20-\x7e]{%d,}" % MIN_RUN

#: A run of printable text in binary content: its line (one more than the newline
#: bytes before it) and its bytes.
Run = tuple[int, bytes]


@functools.cache
def _run() -> re.Pattern[bytes]:
    return re.compile(_RUN)


def printable_runs(data: bytes) -> list[Run]:
    """Every run of ``MIN_RUN`` or more printable ASCII characters (and tabs) in
    ``data``, as ``strings`` lists them, each with its line: a text file that a NUL
    makes binary keeps its line numbers. One pass of a regular expression in C."""
    runs = []
    line, at = 1, 0
    for match in _run().finditer(data):
        start = match.start()
        line += data.count(b"\n", at, start)
        at = start
        runs.append((line, match.group()))
    return runs


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


def printable_text(data: bytes) -> str:
    """A binary blob as the text it is judged as: its printable runs on their lines."""
    lines = runs_by_line(printable_runs(data))
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
    """The Skipped item for ``reason``: unjudged when it left content unread."""
    return Skipped(path=path, reason=reason, commit=commit, unjudged=reason == LARGE_BINARY)
