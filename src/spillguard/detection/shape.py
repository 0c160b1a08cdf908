"""What a value looks like: a hash where the text says it is one. Pure functions.

A digest is random-looking by construction, so no rule can tell it from a key by
its characters alone; the text around it tells. A value that sits inside a token
labelled as a digest (``sha256=…`` in a wheel's RECORD, ``sha512-…`` in a lock
file's ``integrity``, ``h1:…`` in go.sum, ``sha256:…`` in an image reference) is
that digest, or a piece of it, whatever shape a rule saw in it.
"""

from __future__ import annotations

import re

#: How far before a value its label is looked for: a label, its operator and the
#: start of a digest the value is a piece of (a SHA-512 in base64 is 88 characters).
_REACH = 160

_HASH_LABEL = re.compile(
    r"""(?ix)
    (?<![A-Za-z0-9])
    (?:sha-?(?:1|224|256|384|512)(?:-\d+)?|md5|blake2[bs]?|blake3|xxh(?:32|64|128)|crc32c?|h1
       |integrity|checksum|digest)
    ["']?\s*[=:-]\s*["']?
    [A-Za-z0-9+/_=-]*\Z
    """
)


def in_hash_context(text: str, start: int) -> bool:
    """Whether the value starting at ``start`` in ``text`` lies in a digest named as
    one just before it: the label, its operator, then nothing but digest characters."""
    before = text[max(0, start - _REACH) : start]
    return _HASH_LABEL.search(before) is not None
