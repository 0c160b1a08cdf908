"""Shannon entropy, the floor that separates random-looking values from words."""

from __future__ import annotations

import math
from collections import Counter


def shannon(text: str) -> float:
    """Bits per character of ``text``; 0.0 for the empty string."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())
