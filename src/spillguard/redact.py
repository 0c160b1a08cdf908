"""Masking of matched secrets: reports never show a full secret unless asked."""

from __future__ import annotations

MASK = "*"


def visible_prefix(secret: str) -> int:
    """How many leading characters stay readable: enough to recognise a token type."""
    return min(4, len(secret) // 5)


def mask(secret: str) -> str:
    """``AKIAxxxxxxxxxxxxxxxx`` becomes ``AKIA****************``; the length is kept."""
    keep = visible_prefix(secret)
    return secret[:keep] + MASK * (len(secret) - keep)


def mask_span(text: str, start: int, end: int) -> str:
    """``text`` with ``text[start:end]`` masked; offsets stay valid."""
    return text[:start] + mask(text[start:end]) + text[end:]


def mask_match(match_text: str, secret_start: int = 0, secret_end: int = -1) -> str:
    """The match with only its secret part masked (all of it when no part is known)."""
    if secret_end < 0:
        return mask(match_text)
    return mask_span(match_text, secret_start, secret_end)
