"""Bytes to text for scanning: binary detection and tolerant decoding."""

from __future__ import annotations

#: Bytes sniffed for a NUL to call content binary (git's own heuristic uses 8000).
SNIFF_BYTES = 8000


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:SNIFF_BYTES]


def decode(data: bytes) -> str:
    """UTF-8 text; anything else is read as Latin-1 so every ASCII secret is still found."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")
