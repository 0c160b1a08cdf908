"""Allowlisting: the inline pragma and ``allowlist_paths``. Pure functions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from collections.abc import Iterable

# The server's marker and detect-secrets' older spelling, after a comment opener:
# `#`, `//`, `/*`, `'`, `<!--`, `--` or `;`. A `#` inside another comment
# (`-- # pragma: ...`) is found because the search is not anchored.
_PRAGMA = regex.compile(r"(?:#|//|/\*|'|<!--|--|;)[ \t]*pragma:[ \t]*allowlist[ -]secret\b")
_PRAGMA_HINT = "allowlist"


def has_pragma(line: str) -> bool:
    """True when the line carries ``pragma: allowlist-secret`` in a comment."""
    return _PRAGMA_HINT in line and _PRAGMA.search(line) is not None


def path_allowlisted(path: str, patterns: Iterable[regex.Pattern[str]]) -> bool:
    """True when the whole path matches an ``allowlist_paths`` entry (as Java's matches())."""
    return any(pattern.fullmatch(path) for pattern in patterns)
