"""Repository-controlled text made safe for a terminal: no escape sequences, no controls."""

from __future__ import annotations

import regex

# C0 and C1 controls (ESC among them), DEL, and bidirectional overrides that can
# make a line read differently from what it is (Trojan Source).
_UNSAFE = regex.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` with every unsafe character shown as a visible escape like ``\\x1b``."""
    return _UNSAFE.sub(
        lambda m: (
            f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100 else f"\\u{ord(m.group(0)):04x}"
        ),
        text,
    )


# What json.dumps(ensure_ascii=False) leaves raw but a terminal may act on.
_JSON_UNSAFE = regex.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def json_safe(document: str) -> str:
    """JSON text with C1 controls and bidi overrides written as ``\\uXXXX`` escapes.

    Outside strings JSON is plain ASCII, so these can only sit inside strings, where
    the escape means the same character: the data is unchanged, the bytes are inert.
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", document)
