"""Repository-controlled text made safe for a terminal: no escape sequences, no controls."""

from __future__ import annotations

import functools
import re

# Character classes, which re reads as regex does: a hook writing its report need
# not import regex (~12 ms of a commit hook that met no rule).
# C0 and C1 controls (ESC among them), DEL, and bidirectional overrides that can
# make a line read differently from what it is (Trojan Source); lone surrogates, which
# stand for the bytes of a file name that is not UTF-8 and no UTF-8 stream can write.
_UNSAFE = r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
#: Python decodes an undecodable byte B of a file name as the surrogate U+DC00 + B.
_ESCAPED_BYTES = range(0xDC80, 0xDD00)


def clean(text: str) -> str:
    """``text`` with every unsafe character shown as a visible escape like ``\\x1b``."""
    return _compiled(_UNSAFE).sub(lambda m: _escape(ord(m.group(0))), text)


def clean_name(text: str) -> str:
    """A path or ref cleaned like ``clean``, its tabs too (``\\x09``): in a name a
    tab cannot be told from spaces, and the name would not match the file's."""
    return clean(text).replace("\t", _escape(ord("\t")))


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: re compiles these ranges (the surrogates'
    above all) in ~2 ms, and a commit hook with nothing to report cleans no text."""
    return re.compile(pattern)


def _escape(code: int) -> str:
    if code in _ESCAPED_BYTES:
        code -= 0xDC00  # the byte of the file name, as `caf\xe9.txt`
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# What json.dumps(ensure_ascii=False) leaves raw but a terminal may act on.
_JSON_UNSAFE = r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def json_safe(document: str) -> str:
    """JSON text with C1 controls, bidi overrides and lone surrogates (the bytes of a
    file name that is not UTF-8) written as ``\\uXXXX`` escapes.

    Outside strings JSON is plain ASCII, so these can only sit inside strings, where
    the escape means the same character: the data is unchanged, the bytes are inert.
    """
    return _compiled(_JSON_UNSAFE).sub(lambda m: f"\\u{ord(m.group(0)):04x}", document)
