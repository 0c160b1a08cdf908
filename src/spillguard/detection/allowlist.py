"""Allowlisting: the inline pragma and ``allowlist_paths``. Pure functions."""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable

    import regex

#: The server's documented pragmas, "exactly as shown" in its documentation: the
#: marker (or the older ``allowlist secret`` spelling) in one of five comment forms,
#: with whitespace (or the line's edge) on either side, so that neither
#: ``x='...'#pragma: ...`` nor a ``--`` or ``;`` opener passes here and fails there.
#: A ``#`` form inside another comment (``-- # pragma: allowlist-secret``) is one of them.
_MARKERS = ("pragma: allowlist-secret", "pragma: allowlist secret")
_FORMS = ("# {}", "// {}", "/* {} */", "' {}", "<!-- {} -->")
_PRAGMA_HINT = "pragma: allowlist"


def has_pragma(line: str) -> bool:
    """True when the line carries one of the server's documented allowlist pragmas."""
    return _PRAGMA_HINT in line and _pragma().search(line) is not None


@functools.cache
def _pragma() -> re.Pattern[str]:
    """The pragmas' pattern, compiled on first use: only a line with a match is asked,
    and a hook's clean commit never is (its compiling was a sixth of this module's
    import). Literal text between blanks: re reads it as regex does, and a hook need
    not load regex."""
    return re.compile(
        r"(?<![^ \t])(?:"
        + "|".join(re.escape(form.format(marker)) for form in _FORMS for marker in _MARKERS)
        + r")(?![^ \t])"
    )


def path_allowlisted(path: str, patterns: Iterable[regex.Pattern[str]]) -> bool:
    """True when the whole path matches an ``allowlist_paths`` entry (as Java's matches())."""
    return any(pattern.fullmatch(path) for pattern in patterns)
