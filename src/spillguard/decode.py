"""Bytes to text for scanning: binary detection and tolerant decoding."""

from __future__ import annotations

import functools
import re

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


def decode(data: bytes) -> str:
    """UTF-8 text, or UTF-16/32 after a byte order mark; anything else is read as Latin-1
    so every ASCII secret is still found."""
    codec = wide_encoding(data)
    if codec is not None:
        # A malformed unit (an odd last byte) must not stop the scan of the rest.
        return data.decode(codec, "replace")
    try:
        text = data.decode("utf-8")  # the C codec: "utf-8-sig" is a Python wrapper
    except UnicodeDecodeError:
        return data.decode("latin-1")
    return text.removeprefix("\ufeff")  # as "utf-8-sig" reads it
