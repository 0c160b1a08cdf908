"""Checks a provider publishes for its tokens: a token that fails one is not a token.

A built-in rule names its check with ``checksum = "<name>"``; the engine drops a
match whose secret fails it. Pure functions of the secret, one per published format.
"""

from __future__ import annotations

import binascii
import functools
import re

from spillguard.detection.filters import is_placeholder

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CRC_DIGITS = 6


def base62_crc32(body: str) -> str:
    """The CRC32 of ``body`` in six base62 digits, as GitHub and npm append it."""
    value = binascii.crc32(body.encode())
    digits = ""
    while value:
        value, digit = divmod(value, 62)
        digits = _BASE62[digit] + digits
    return digits.rjust(_CRC_DIGITS, "0")


def _prefixed_crc32(secret: str) -> bool:
    """``<prefix>_<body><crc>``: GitHub's ghp_/gho_/ghu_/ghs_ tokens and npm's npm_
    tokens end in the base62 CRC32 of the random part between the prefix and it
    (github.blog, 2021-04-05 and 2021-09-23)."""
    _, _, token = secret.rpartition("_")
    body, crc = token[:-_CRC_DIGITS], token[-_CRC_DIGITS:]
    return bool(body) and base62_crc32(body) == crc


def _basic_credentials(secret: str) -> bool:
    """An HTTP Basic value is ``base64(user:password)``: one that decodes to a
    placeholder pair (``user:password``, ``<user>:<pass>``) is a documentation sample."""
    import base64  # on a Basic header only: a commit hook rarely meets one

    padded = secret + "=" * (-len(secret) % 4)
    try:
        decoded = base64.b64decode(padded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return True  # not plain base64 of text: judged by its shape alone
    user, colon, password = decoded.partition(":")
    if not colon:
        return True
    return not (is_placeholder(password) or password.lower() in {user.lower(), "pass", "secret"})


@functools.cache
def _checked_token() -> re.Pattern[str]:
    """A token of a format with a published checksum, wherever it stands in a secret."""
    return re.compile(r"(?<![A-Za-z0-9])(?:gh[pous]|npm)_[A-Za-z0-9]{36}(?![A-Za-z0-9])")


def fails_published_check(secret: str) -> bool:
    """Whether ``secret`` holds a GitHub or npm token whose checksum is wrong: made up
    (docs, fixtures), so no rule reports it, not even one judging it by its name."""
    if "_" not in secret:
        return False
    return any(not _prefixed_crc32(match.group(0)) for match in _checked_token().finditer(secret))


CHECKS = {
    "github_crc32": _prefixed_crc32,
    "npm_crc32": _prefixed_crc32,
    "basic_credentials": _basic_credentials,
}


def passes(check: str, secret: str) -> bool:
    """Whether ``secret`` passes the named check (a name of ``CHECKS``)."""
    return CHECKS[check](secret)
