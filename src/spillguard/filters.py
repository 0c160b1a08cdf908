"""Value filters for generic assignment rules: environment references and placeholders.

These are the GENERIC_PASSWORD settings the hosted variant exposes, each switchable
through :class:`~spillguard.models.PasswordFilters`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from spillguard.models import PasswordFilters

# A value that only names where the secret comes from at run time.
_ENV_REFERENCE = regex.compile(
    r"""
    ^\$\{\{?[^}]*\}?\}$                     # ${X}, ${{ secrets.X }}
    | ^\$[A-Za-z_][A-Za-z0-9_]*$            # $X
    | ^\$\(.*\)$                            # $(command)
    | ^%\([A-Za-z_][A-Za-z0-9_]*\)[sd]$     # %(x)s
    | ^%[A-Za-z_][A-Za-z0-9_]*%$            # %X% (Windows)
    | ^\{\{.*\}\}$                          # {{X}}, {{ .Values.x }}
    | ^\{[A-Za-z_][A-Za-z0-9_.]*\}$         # {x} (format strings)
    | ^\#\{.*\}$                            # #{x} (Ruby, Spring)
    | ^<%=?.*%>$                            # <%= x %> (ERB)
    | os\.environ | os\.getenv | getenv\s*\( | process\.env
    | System\.getenv | Environment\.GetEnvironmentVariable
    | \bENV\s*\[ | \bENV\.fetch | env::var | \$ENV\{ | \benv\(
    | secrets\.[A-Za-z_] | vault:|\bssm:|\bawssm:
    """,
    regex.VERBOSE,
)

# A value that stands where a real one will go.
_PLACEHOLDER = regex.compile(
    r"""
    ^[*xX#.•_-]+$                           # ********, xxxx, ...., ____
    | ^<[^<>]*>$ | ^\[[^\[\]]*\]$           # <your password>, [REDACTED]
    | ^(?:change[-_ ]?me|changeit|password|passw(?:or)?d|passwd|pass|pwd|secret|
          redacted|removed|hidden|masked|placeholder|example|sample|dummy|fake|
          test|testing|none|null|nil|undefined|true|false|empty|todo|tbd|fixme|
          your[-_ ]?\w*|my[-_ ]?password|enter[-_ ]?\w*|insert[-_ ]?\w*|
          foo|bar|baz|foobar|abc123|123456|qwerty|admin|root|user|username|
          secret[-_]?key|api[-_]?key|token|value|string|str|default)$
    | ^(?:your|my|some|the|a)[-_ ]\w+
    """,
    regex.VERBOSE | regex.IGNORECASE,
)

_QUOTES = "\"'`"


def unquote(value: str) -> str:
    """The value with one pair of surrounding quotes removed."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in _QUOTES:
        return value[1:-1]
    return value


def is_env_reference(value: str) -> bool:
    return _ENV_REFERENCE.search(unquote(value).strip()) is not None


def is_placeholder(value: str) -> bool:
    stripped = unquote(value).strip()
    return not stripped or _PLACEHOLDER.search(stripped) is not None


def password_value_rejected(value: str, settings: PasswordFilters) -> bool:
    """True when a GENERIC_PASSWORD value is not a secret under ``settings``."""
    stripped = unquote(value).strip()
    if len(stripped) < settings.min_length:
        return True
    if settings.env_references and is_env_reference(stripped):
        return True
    return settings.placeholders and is_placeholder(stripped)
