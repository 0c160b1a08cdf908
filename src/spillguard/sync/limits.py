"""How much of a server's answers sync takes, so that a misbehaving server can neither
make every later commit slow (a huge rule, a million reviewed lines in the cache) nor
make sync itself take all the memory or the stack.

An answer over a limit is refused whole, with one line, before anything is written:
the previous cache stays as it was. The limits are far above what a real server sends
(docs/sync.md lists them).
"""

from __future__ import annotations

import re
from typing import Any

from spillguard.core.errors import SyncError

#: Rules in one rule list (the server has about a thousand built-in ones).
MAX_RULES = 5_000
#: Characters of one custom rule's expression; a longer one is not applied, and named.
MAX_REGEXP = 16 * 1024
#: Characters of one rule's display name.
MAX_NAME = 256
#: Reviewed lines across every export read in one sync.
MAX_REVIEWED = 100_000
#: Items of one list across all its pages.
MAX_ITEMS = 100_000
#: Arrays and objects inside one another in one answer.
MAX_DEPTH = 32
#: Values (items, members, containers) in one JSON answer: parsed, each costs memory.
MAX_VALUES = 1_000_000

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: Every byte but the structure of JSON, deleted to count and nest it.
_NOT_STRUCTURE = bytes(set(range(256)) - set(b"[]{},"))


class LimitError(SyncError, ValueError):
    """An answer over one of the limits above."""


def _check_shape(data: bytes, where: str) -> None:
    """Refuse JSON text nested deeper than MAX_DEPTH or holding more than MAX_VALUES
    values, before it is parsed (a parser would recurse, or build every value first).

    Strings are removed, then everything but brackets and commas; commas and openers
    count the values, and each pass drops the innermost pairs, so a document nested
    ``d`` deep is empty after ``d`` passes. Each step is one pass of C over the bytes.
    """
    structure = _STRING.sub(b"", data).translate(None, _NOT_STRUCTURE)
    values = structure.count(b",") + structure.count(b"[") + structure.count(b"{")
    if values > MAX_VALUES:
        raise LimitError(f"{where}: the answer holds more than {MAX_VALUES} JSON values")
    structure = structure.replace(b",", b"")
    for _ in range(MAX_DEPTH):
        if not structure:
            return
        shorter = structure.replace(b"{}", b"").replace(b"[]", b"")
        if len(shorter) == len(structure):  # brackets that do not pair: never JSON
            raise ValueError(f"{where}: not JSON")
        structure = shorter
    if structure:
        raise LimitError(f"{where}: the answer is nested more than {MAX_DEPTH} levels deep")


def load_json(data: bytes, encoding: str, where: str) -> Any:
    """``data`` (in ``encoding``) parsed as JSON within the limits: a ValueError (a
    UnicodeDecodeError) when it is not JSON, a LimitError (a ValueError too) when it is
    over them. UTF-8, as nearly every answer is, is checked before it is even decoded."""
    import codecs
    import json

    if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig"):
        _check_shape(data, where)
        return json.loads(data.decode(encoding))
    text = data.decode(encoding)
    _check_shape(text.encode("utf-8", "surrogatepass"), where)
    return json.loads(text)


def check_count(count: int, limit: int, what: str, where: str) -> None:
    """Refuse an answer of more than ``limit`` ``what``."""
    if count > limit:
        raise LimitError(f"{where}: more than {limit} {what}, over what spillguard takes")
