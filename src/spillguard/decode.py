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


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:SNIFF_BYTES]


def decode(data: bytes) -> str:
    """UTF-8 text; anything else is read as Latin-1 so every ASCII secret is still found."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")
