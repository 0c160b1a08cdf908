"""Bytes to text for scanning: binary detection and tolerant decoding."""

from __future__ import annotations

import re

#: Bytes sniffed for a NUL to call content binary (git's own heuristic uses 8000).
SNIFF_BYTES = 8000


# An LFS pointer is a tiny text file; the content it points at is not in git. Only
# the exact format git-lfs writes counts (version, extensions, oid, size, in that
# order): a header alone would let any file that starts with it go unscanned.
_LFS_POINTER = re.compile(
    rb"version https://git-lfs\.github\.com/spec/v1\n"
    rb"(?:ext-\d+-[a-z0-9]+ sha256:[0-9a-f]{64}\n)*"
    rb"oid sha256:[0-9a-f]{64}\n"
    rb"size \d+\n?"
)
#: git-lfs never reads a blob this large or larger as a pointer (its blobSizeCutoff);
#: history scans rely on it to judge big blobs without reading them twice.
LFS_POINTER_LIMIT = 1024


def is_lfs_pointer(data: bytes) -> bool:
    return len(data) < LFS_POINTER_LIMIT and _LFS_POINTER.fullmatch(data) is not None


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:SNIFF_BYTES]


def decode(data: bytes) -> str:
    """UTF-8 text; anything else is read as Latin-1 so every ASCII secret is still found."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")
